"""AccidentalBroadcast (issue 19): the seed's ``[C1, N] + [C2, N] -> [C1, N, C2]`` pitfall and
operands that share no axis are warned about, in axis names with the fix; the correct versions
and the gallery's other examples are not; strict mode makes it an error, in the API and the CLI;
the incremental checker agrees with a full check."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from geon import core as gc
from geon.core.checks import IncrementalChecker, check, check_document
from geon.core.graph import OPERATION, Graph
from geon.examples.gallery import EXAMPLES

ROOT = Path(__file__).resolve().parents[3]


def _pitfall(cast: bool = False, axes: bool = False) -> Graph:
    C1, C2, N = gc.Axis("C1", 3), gc.Axis("C2", 3), gc.Axis("N", 4)
    a = gc.constant(np.ones((3, 4)), axes=[C1, N], name="a")
    b = gc.constant(np.arange(12.0).reshape(3, 4), axes=[C2, N], name="b")
    if cast:
        b = gc.cast_axes(b, [C1, N], name="b as C1")
    return gc.graph([gc.add(a, b, axes=[C1, N, C2] if axes else None, name="a+b")])


def _warnings(g: Graph) -> list[dict]:
    return [i.to_json() for i in check(g) if i.constraint == "AccidentalBroadcast"]


def test_the_seed_pitfall_is_flagged_with_the_axes_and_the_fix() -> None:
    # given the seed's [C1, N] + [C2, N] (C1 and C2 of equal length)
    g = _pitfall()
    found = _warnings(g)
    # then one warning names both axes, says the fix, and carries what the editor's fix needs
    assert len(found) == 1
    w = found[0]
    assert w["severity"] == "warning" and w["type"] == "LikelySameAxis"
    assert "C1" in w["message"] and "C2" in w["message"]
    assert (
        "cast C2 to C1 with cast_axes" in w["message"] and "declare them one axis" in w["message"]
    )
    assert '"b"' in w["message"] and '"a+b"' in w["message"]
    op = next(n for n in g.nodes if n.type == OPERATION)
    assert set(w["params"]) >= {"operationId", "operand", "position", "fromAxis", "toAxis"}
    assert (w["params"]["operand"], w["params"]["position"]) == ("tensors", 1)
    assert (w["params"]["fromAxis"], w["params"]["toAxis"]) == ("C2", "C1")
    assert w["params"]["operationId"] == op.id == w["nodeIds"][0]
    assert w["params"]["tensorId"] == op.body["inputs"]["tensors"][1]["tensorId"]


def test_the_corrected_versions_are_not_flagged() -> None:
    # cast_axes before adding, or naming the result axes (the outer sum is meant)
    assert _warnings(_pitfall(cast=True)) == []
    assert _warnings(_pitfall(axes=True)) == []
    assert check(_pitfall(cast=True)) == []


def test_operands_sharing_no_axis_are_flagged_and_scalars_are_not() -> None:
    H, K = gc.Axis("H", 3), gc.Axis("K", 3)
    a = gc.constant([1.0, 2.0, 3.0], axes=[H], name="a")
    b = gc.constant([10.0, 20.0, 30.0], axes=[K], name="b")
    (w,) = _warnings(gc.graph([a * b]))
    assert w["type"] == "DisjointOperands" and "share no axis" in w["message"]
    assert (w["params"]["fromAxis"], w["params"]["toAxis"]) == ("K", "H")
    assert _warnings(gc.graph([a * 2.0])) == []
    # different lengths: still an outer product, but there is no axis to cast to
    L = gc.Axis("L", 2)
    (w2,) = _warnings(gc.graph([a + gc.constant([1.0, 2.0], axes=[L])]))
    assert w2["params"]["fromAxis"] is None and w2["params"]["fix"] is None


def test_no_gallery_example_gets_a_false_warning() -> None:
    # the only warning in the gallery is the cast-axes example's deliberate outer sum
    found = {
        slug: [(i.constraint, i.severity) for i in build().check()]
        for slug, (_, _, build) in EXAMPLES.items()
    }
    for slug, issues in found.items():
        if slug == "cast-axes":
            assert issues in ([], [("AccidentalBroadcast", "warning")])
        else:
            assert issues == [], slug


def test_strict_broadcasting_makes_it_an_error() -> None:
    text = json.dumps(_pitfall().to_json())
    assert [i.severity for i in check_document(text)] == ["warning"]
    assert [i.severity for i in check_document(text, strict_broadcasting=True)] == ["error"]
    assert [i.severity for i in check(_pitfall(), strict_broadcasting=True)] == ["error"]


def test_the_cli_reports_warnings_and_exits_0_unless_strict(tmp_path: Path) -> None:
    doc = tmp_path / "pitfall.json"
    doc.write_text(json.dumps(_pitfall().to_json()))

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "geon", "check", str(doc), *extra],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
        )

    plain = run()
    assert plain.returncode == 0, plain.stderr
    (line,) = plain.stdout.splitlines()
    assert json.loads(line)["severity"] == "warning"
    assert json.loads(line)["constraint"] == "AccidentalBroadcast"
    strict = run("--strict-broadcasting")
    assert strict.returncode == 1
    assert json.loads(strict.stdout.splitlines()[0])["severity"] == "error"


def test_the_incremental_checker_warns_as_a_full_check_does() -> None:
    # given the pitfall graph without its add, checked incrementally
    g = _pitfall()
    op = next(n for n in g.nodes if n.type == OPERATION)
    partial = Graph([n for n in g.nodes if n.id != op.id], id=g.id)
    ic = IncrementalChecker(partial)
    # when the add is added by an edit, then the warning appears as in a full check
    issues = ic.apply([{"op": "add_node", "node": op.to_json()}])
    assert [i.constraint for i in issues] == ["AccidentalBroadcast"]
    assert issues == check(g)
    # and removing it takes the warning away
    assert ic.apply([{"op": "remove_node", "id": op.id}]) == check(partial)

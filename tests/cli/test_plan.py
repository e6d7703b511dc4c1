"""``python -m geon plan``, run as a user runs it: the plan written into the document checks
clean and runs sharded to the logical result; bad files exit 2 and misfits 1, with one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from geon import core as gc
from geon.core.graph import APPLICATION, OPERATION, PLACEMENT
from geon.core.plans import INPUT_PLACEMENT
from tests.processes import geon


def mlp() -> dict[str, Any]:
    """The issue's 2-layer MLP: x[N, D] -> dot W1[D-1, F] -> relu -> dot W2[F-1, D]."""
    N, D, F = gc.Axis("N", 4), gc.Axis("D", 3), gc.Axis("F", 6)
    x = gc.placeholder(axes=[N, D], name="x")
    w1 = gc.placeholder(axes=[D - 1, F], name="W1")
    w2 = gc.placeholder(axes=[F - 1, D], name="W2")
    h = gc.relu(gc.dot(x, w1, name="hidden"), name="relu")
    return gc.graph([gc.dot(h, w2, name="y")]).to_json()


def write(path: Path, data: Any) -> str:
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


MESH = {"name": "pod", "axes": {"dp": 2, "tp": 3}}


@pytest.mark.parametrize(
    ("label", "mapping", "placed"),
    [
        ("data parallel", {"N": "dp"}, [2, 2, 2]),
        # the sum of the partial products runs whole: replicated, no Application
        ("hidden axis over tp", {"F": "tp"}, [3, 3, 0, 3]),
        ("both", {"N": "dp", "F": "tp"}, [6, 6, 2, 6]),
    ],
)
def test_a_written_plan_checks_clean_and_runs_sharded_as_logical(
    tmp_path: Path, label: str, mapping: dict[str, str], placed: list[int]
) -> None:
    doc = write(tmp_path / "mlp.json", mlp())
    plan = write(
        tmp_path / "plan.json",
        {"name": label, "mesh": MESH, "axisMapping": mapping, "inputs": {"x": "replicated"}},
    )
    out = tmp_path / "out.json"
    done = geon("plan", doc, "--plan", plan, "-o", str(out))
    assert (done.returncode, done.stdout) == (0, "")
    written = json.loads(out.read_text("utf-8"))
    ops = [n["id"] for n in written["nodes"] if n["type"] == OPERATION]
    apps = [n for n in written["nodes"] if n["type"] == APPLICATION]
    assert [sum(a["body"]["operationId"] == op for a in apps) for op in ops] == placed
    assert all(PLACEMENT in a["tags"] for a in apps)
    [x] = [n for n in written["nodes"] if n.get("label") == "x"]
    assert x["tags"][INPUT_PLACEMENT]["placement"] == "replicated"
    # the second dot contracts F: a mapping of F makes it partial products (the last
    # operation) and a sum under its id, so nothing runs whole
    assert done.stderr == ""
    checked = geon("check", str(out))
    assert (checked.returncode, checked.stdout, checked.stderr) == (0, "", "")
    ran = geon("run", str(out), "--sharded")
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["max_abs_diff"] == {"y": 0.0}


def test_the_plan_goes_to_stdout_without_o(tmp_path: Path) -> None:
    doc = write(tmp_path / "mlp.json", mlp())
    plan = write(tmp_path / "plan.json", {"name": "dp", "mesh": MESH, "axisMapping": {"N": "dp"}})
    done = geon("plan", doc, "--plan", plan)
    assert (done.returncode, done.stderr) == (0, "")
    assert len([n for n in json.loads(done.stdout)["nodes"] if n["type"] == APPLICATION]) == 6


@pytest.mark.parametrize(
    ("label", "document", "plan", "status", "message"),
    [
        (
            "document not JSON",
            "{",
            {"name": "p", "mesh": MESH},
            2,
            '"{doc}" is not valid JSON: Expecting property name enclosed in double quotes: line 1 '
            "column 2 (char 1)",
        ),
        (
            "plan not JSON",
            None,
            "[",
            2,
            '"{plan}" is not valid JSON: Expecting value: line 1 column 2 (char 1)',
        ),
        (
            "plan without a mesh",
            None,
            {"name": "p"},
            2,
            '"{plan}" is not a plan: mesh "None" is not valid; expected {"name": "...", "axes": '
            '{"x": 2}} with at least one axis',
        ),
        (
            "mapping of an axis the document lacks",
            None,
            {"name": "p", "mesh": MESH, "axisMapping": {"Q": "dp"}},
            1,
            'plan "p" does not fit "{doc}": axis mapping "Q" -> "dp": no tensor or operation of '
            'the document has axis "Q"; expected one of ("D", "F", "N")',
        ),
        (
            "unknown operation",
            None,
            {"name": "p", "mesh": MESH, "spec": {"nope": {"over": {"N": "dp"}}}},
            1,
            'plan "p" does not fit "{doc}": edit op 1 (shard): operation "nope" does not exist; '
            "expected the id of one of the 3 operations in the graph",
        ),
    ],
)
def test_bad_input_exits_with_one_line(
    tmp_path: Path, label: str, document: Any, plan: Any, status: int, message: str
) -> None:
    doc_path, plan_path = tmp_path / "doc.json", tmp_path / "plan.json"
    doc_path.write_text(document if document is not None else json.dumps(mlp()), "utf-8")
    plan_path.write_text(plan if isinstance(plan, str) else json.dumps(plan), "utf-8")
    out = tmp_path / "out.json"
    done = geon("plan", str(doc_path), "--plan", str(plan_path), "-o", str(out))
    expected = message.replace("{doc}", str(doc_path)).replace("{plan}", str(plan_path))
    assert (done.returncode, done.stdout, done.stderr) == (status, "", f"geon plan: {expected}\n")
    assert not out.exists()


def test_an_operation_left_whole_is_named_by_label_output_and_scope(tmp_path: Path) -> None:
    # given the transformer block mapped D to the mesh: layer_norm reduces D, so runs whole;
    # the first keeps an import's name scope
    from geon.examples.transformer import PLANS, transformer_block

    document = transformer_block().to_json()
    norms = [n for n in document["nodes"] if n["body"].get("kernel") == "op:layer_norm"]
    norms[0]["tags"]["urn:geon:2026-11:tag_types.jsd#/tags/Group"] = {"scope": "/layers.0/ln"}
    plan = next(p for p in PLANS if p["axisMapping"] == {"D": "tp"})
    done = geon(
        "plan",
        write(tmp_path / "block.json", document),
        "--plan",
        write(tmp_path / "plan.json", plan),
        "-o",
        str(tmp_path / "out.json"),
    )
    # then each is named as people read it, its id beside, with the reason
    lines = done.stderr.splitlines()
    assert done.returncode == 0 and len(lines) == 2, done.stderr
    first, second = (n["id"] for n in norms)
    assert lines[0].startswith(
        f'geon plan: operation "op:layer_norm → ln1" in layers.0/ln ("{first}") runs whole: it '
        'contracts or reduces "D" (mesh axis "tp")'
    ), lines[0]
    assert lines[1].startswith(
        f'geon plan: operation "op:layer_norm → ln2" ("{second}") runs whole: '
    ), lines[1]


def _search(tmp_path: Path, *args: str) -> Any:
    doc = write(tmp_path / "mlp.json", mlp())
    return geon("plan", doc, "--search", *args)


def test_search_prints_the_best_and_candidates_with_progress_on_stderr(tmp_path: Path) -> None:
    out = tmp_path / "best.json"
    done = _search(tmp_path, "dp=2", "--budget", "30", "-o", str(out))
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["best"]["fits"] and found["best"] == found["candidates"][0]
    assert {"axisMapping", "seconds", "fits", "why"} <= set(found["candidates"][0])
    assert "geon plan: searched 1 plans in" in done.stderr
    # -o wrote the best plan into the document: its Applications on the dp mesh
    written = json.loads(out.read_text("utf-8"))
    assert any(n["type"] == APPLICATION for n in written["nodes"])


def test_search_of_a_training_step(tmp_path: Path) -> None:
    N, D = gc.Axis("N", 8, batch=True), gc.Axis("D", 4)
    x = gc.placeholder(axes=[N, D], name="x")
    w = gc.variable([D + 1, D], name="w")
    loss = gc.sum(gc.square(gc.dot(x, w, name="y")), name="loss")
    doc = write(tmp_path / "net.json", gc.graph([loss]).to_json())
    done = geon("plan", doc, "--search", "dp=2", "--step", "train")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    # the step was searched: the backward pass's own axes (D_bw1) are candidates too
    mapped = {a for c in found["candidates"] for a in c["axisMapping"]}
    assert {"N", "D_bw1"} <= mapped and found["best"]["fits"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["dp=two"], 'mesh "dp=two" is not valid at "dp=two"; expected axis=size pairs'),
        (["dp=2,dp=2"], "expected axis=size pairs separated by commas, like dp=2,tp=4 (each"),
        (["a=64,b=64,c=2"], "has 3 axes and 8192 devices; expected at most 4 axes and 4096"),
        (["dp=2", "--budget", "0"], 'budget "0.0" is not valid; expected seconds > 0 and <= 600'),
        (["dp=2", "--profile", "nope"], "nope"),
    ],
)
def test_a_bad_search_is_refused_before_any_work(
    tmp_path: Path, args: list[str], message: str
) -> None:
    out = tmp_path / "out.json"
    done = _search(tmp_path, *args, "-o", str(out))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("geon plan: ") and message in done.stderr
    assert "Traceback" not in done.stderr
    assert not out.exists()
    # and another run is still answered
    assert _search(tmp_path, "dp=2").returncode == 0


def test_search_and_plan_together_are_refused(tmp_path: Path) -> None:
    plan = write(tmp_path / "plan.json", {"name": "p", "mesh": MESH})
    done = _search(tmp_path, "dp=2", "--plan", plan)
    assert done.returncode == 2
    assert "give either --plan PLAN.json or --search MESH, not both" in done.stderr


def test_an_operation_left_whole_says_what_that_forces_as_geon_cost_counts_it(
    tmp_path: Path,
) -> None:
    # given the transformer block with D mapped to tp: each layer_norm reduces D, so runs whole
    from geon.examples.transformer import PLANS, transformer_block

    document = transformer_block().to_json()
    plan = next(p for p in PLANS if p["axisMapping"] == {"D": "tp"})
    doc_path, plan_path = write(tmp_path / "b.json", document), write(tmp_path / "p.json", plan)
    # when the plan is written, and costed by geon cost under the same profile
    done = geon("plan", doc_path, "--plan", plan_path, "-o", str(tmp_path / "out.json"))
    cost = geon("cost", doc_path, "--plan", plan_path)
    # then each line ends with the collectives into the operation that geon cost reports
    assert done.returncode == 0 and cost.returncode == 0, done.stderr + cost.stderr
    moves = json.loads(cost.stdout)["collectives"]
    norms = [n["id"] for n in document["nodes"] if n["body"].get("kernel") == "op:layer_norm"]
    for line, norm in zip(done.stderr.splitlines(), norms, strict=True):
        into = [c for c in moves if c["consumer"] == norm]
        assert [c["kind"] for c in into] == ["all-gather"], into
        assert line.endswith(f"; forces 1 all-gather of {into[0]['bytes']} B before it"), line


def test_a_refusal_names_the_operation_with_its_id_beside(tmp_path: Path) -> None:
    # given a spec that splits a layer_norm over an axis it does not have
    from geon.examples.transformer import transformer_block

    document = transformer_block().to_json()
    norm = next(n for n in document["nodes"] if n["body"].get("kernel") == "op:layer_norm")
    plan = {"name": "p", "mesh": {"name": "m", "axes": {"dp": 2}}}
    plan["spec"] = {norm["id"]: {"over": {"Q": "dp"}}}
    doc_path = write(tmp_path / "b.json", document)
    # when it is written
    done = geon("plan", doc_path, "--plan", write(tmp_path / "p.json", plan))
    # then the refusal names the operation as people read it, its id beside
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f'geon plan: plan "p" does not fit "{doc_path}": edit op 1 (shard): axis "Q" is not an '
        f'index axis of operation "op:layer_norm → ln1" ("{norm["id"]}"); expected one of '
        '("B", "N") or a dim number 0..1\n'
    )

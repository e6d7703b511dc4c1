"""``python -m geon import --names`` and ``--show-names`` (issue 35), run as a user runs them.

The default keeps the names an axis is imported with (``d4``, ``d64``: scripts and plans written
against them do not change); ``--names inferred`` gives the roles the importer reads off the
model; ``--names AXIS=NAME,...`` or a JSON file names some axes over those; ``--show-names``
prints the table to choose from and writes nothing. Every refusal is one line naming the bad
value (geon/cli/fail.py), and no document is written then.

The oracle for the roles' lengths is the PyTorch module the encoder was exported from
(scripts/export_models.py): ``nn.TransformerEncoderLayer(d_model=32, nhead=4,
dim_feedforward=64)``, so heads is 4, head_size 32 // 4 = 8, hidden 32, ffn 64, and the sequence
is the 10 tokens of the export's example input.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from geon.core.graph import Graph
from geon.core.plans.cost import load_profile, parse_profile
from geon.core.plans.cost.search import search_plans
from tests.processes import geon

ENCODER = Path(__file__).resolve().parent.parent / "interop" / "models" / "encoder.onnx"
D_MODEL, NHEAD, FFN, TOKENS = 32, 4, 64, 10


def _import(tmp_path: Path, *extra: str) -> tuple[Any, dict[str, int], dict[str, Any]]:
    out = tmp_path / "enc.json"
    done = geon("import", str(ENCODER), "-o", str(out), "--dim", "batch=2", *extra)
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    axes = {n["label"]: n["body"]["length"] for n in doc["nodes"] if n["type"].endswith("/Axis")}
    return done, {k: v for k, v in axes.items() if v > 1}, json.loads(done.stdout)


def test_by_default_the_axes_keep_the_names_they_are_imported_with(tmp_path: Path) -> None:
    # given the encoder layer, imported as scripts written before issue 35 import it
    # when no --names is given
    _, axes, summary = _import(tmp_path)
    # then the axes are named d<length> (the dim_param kept), and the summary renames nothing
    assert axes == {"batch": 2, "d10": TOKENS, "d10_2": TOKENS, "d4": NHEAD,
                    "d8": D_MODEL // NHEAD, "d32": D_MODEL, "d64": FFN, "d3": 3}  # fmt: skip
    assert summary["names"] == {}


def test_names_inferred_gives_each_axis_its_role(tmp_path: Path) -> None:
    # given the encoder layer
    # when it is imported with the names the importer proposes
    _, axes, summary = _import(tmp_path, "--names", "inferred")
    # then the document reads like the PyTorch module it came from
    assert axes == {"batch": 2, "sequence": TOKENS, "sequence_q": TOKENS, "heads": NHEAD,
                    "head_size": D_MODEL // NHEAD, "hidden": D_MODEL, "ffn": FFN,
                    "d3": 3}  # fmt: skip
    # and the summary says which axis became which
    assert summary["names"] == {"d10": "sequence", "d10_2": "sequence_q", "d4": "heads",
                                "d8": "head_size", "d32": "hidden", "d64": "ffn"}  # fmt: skip
    # and the document checks clean
    done = geon("check", str(tmp_path / "enc.json"))
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("form", ["pairs", "file"])
def test_names_given_override_the_proposals(tmp_path: Path, form: str) -> None:
    # given names for two axes, as pairs on the command line or as a JSON file
    value = " d4 = h , d64=mlp"
    if form == "file":
        (tmp_path / "names.json").write_text(json.dumps({"d4": "h", "d64": "mlp"}))
        value = str(tmp_path / "names.json")
    # when the encoder is imported with them
    _, axes, summary = _import(tmp_path, "--names", value)
    # then those two axes have the names given and the others their proposed ones
    assert axes == {"batch": 2, "sequence": TOKENS, "sequence_q": TOKENS, "h": NHEAD,
                    "head_size": D_MODEL // NHEAD, "hidden": D_MODEL, "mlp": FFN,
                    "d3": 3}  # fmt: skip
    assert summary["names"]["d4"] == "h" and summary["names"]["d64"] == "mlp"


def test_show_names_prints_the_table_and_writes_nothing(tmp_path: Path) -> None:
    # given the encoder layer
    # when a person asks for the names before importing, with one name of their own
    done = geon("import", str(ENCODER), "--dim", "batch=2", "--show-names", "--names", "d64=mlp")
    # then one row per axis longer than 1 says its length, role, name (the proposal unless
    # given: d64=mlp is), the name proposed for its role and where it is seen
    assert done.returncode == 0, done.stderr
    rows = [line.split(None, 5) for line in done.stdout.splitlines()]
    assert rows[0] == ["axis", "length", "role", "name", "proposed", "seen"]
    table = {r[0]: r[1:5] for r in rows[1:] if not r[0].startswith("(")}
    assert table == {
        "batch": [str(2), "batch", "batch", "batch"],
        "d10": [str(TOKENS), "sequence", "sequence", "sequence"],
        "d10_2": [str(TOKENS), "sequence", "sequence_q", "sequence_q"],
        "d4": [str(NHEAD), "heads", "heads", "heads"],
        "d8": [str(D_MODEL // NHEAD), "head_size", "head_size", "head_size"],
        "d32": [str(D_MODEL), "hidden", "hidden", "hidden"],
        "d64": [str(FFN), "ffn", "mlp", "ffn"],
        "d3": ["3", "-", "d3", "d3"],
    }
    seen = {r[0]: r[5] for r in rows[1:] if len(r) == 6}
    assert seen["d32"] == 'normalised by LayerNormalization "/layer/norm1/LayerNormalization"'
    assert done.stdout.splitlines()[-1] == "(3 axes of length 1 not listed)"
    # and nothing is written
    assert list(tmp_path.iterdir()) == []


def test_show_names_without_names_shows_the_imported_name_beside_the_proposal(
    tmp_path: Path,
) -> None:
    # given the encoder layer
    # when a person asks for the table without --names (the default keeps d<length>)
    done = geon("import", str(ENCODER), "--dim", "batch=2", "--show-names")
    # then the name column says what the document would get (d4...), the proposed one what
    # --names inferred would give (heads...)
    assert done.returncode == 0, done.stderr
    rows = [line.split(None, 5) for line in done.stdout.splitlines()]
    table = {r[0]: (r[3], r[4]) for r in rows[1:] if not r[0].startswith("(")}
    assert table == {
        "batch": ("batch", "batch"), "d10": ("d10", "sequence"), "d10_2": ("d10_2", "sequence_q"),
        "d4": ("d4", "heads"), "d8": ("d8", "head_size"), "d32": ("d32", "hidden"),
        "d64": ("d64", "ffn"), "d3": ("d3", "d3"),
    }  # fmt: skip
    assert list(tmp_path.iterdir()) == []


FORMS = (
    'expected "imported", "inferred", AXIS=NAME[,AXIS=NAME...] (e.g. "d4=heads") or a JSON '
    'file holding {"d4": "heads", ...}'
)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("d4=x-y", 'the name for axis "d4": axis name "x-y" is invalid; expected a letter or "_" '
         'followed by letters, digits or "_"'),
        ("d5=heads", 'axis "d5" is not an axis of this model; expected one of "batch", "d10", '
         '"d10_2", "d4", "d8", "d32", "d64", "d3"'),
        ("d4=ffn", 'name "ffn" is given to axes "d4" and "d64"; expected one name per axis'),
        ("d4=h,d64", f'names item "d64" is invalid; {FORMS}'),
        ("d4=a,d4=b", f'axis "d4" is named twice in --names; {FORMS}'),
        ("heads", f'--names "heads" is no such file, nor a word or pairs; {FORMS}'),
    ],
)  # fmt: skip
def test_bad_names_are_refused_in_one_line_naming_them(
    tmp_path: Path, value: str, message: str
) -> None:
    # given a --names value that is wrong
    # when the encoder is imported with it
    done = geon("import", str(ENCODER), "-o", str(tmp_path / "e.json"), "--dim", "batch=2",
                "--names", value)  # fmt: skip
    # then the import is refused in one line naming the bad value, and nothing is written
    assert (done.returncode, done.stderr) == (2, f"geon import: {message}\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("text", "message"),
    [("[1]", "holds a JSON array"), ('{"d4": 3}', ""), ("{", "as JSON")],
)
def test_a_bad_names_file_is_refused_naming_it(tmp_path: Path, text: str, message: str) -> None:
    # given a names file that is not an object of names
    path = tmp_path / "names.json"
    path.write_text(text)
    # when the encoder is imported with it
    done = geon("import", str(ENCODER), "-o", str(tmp_path / "e.json"), "--dim", "batch=2",
                "--names", str(path))  # fmt: skip
    # then it is refused in one line naming the file (or the bad name in it)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    if message:
        assert f'names file "{path}"' in done.stderr and message in done.stderr
    else:
        assert done.stderr == 'geon import: the name for axis "d4" is 3; expected text\n'
    assert not (tmp_path / "e.json").exists()


def test_without_an_output_or_show_names_the_import_is_refused(tmp_path: Path) -> None:
    # given no -o and no --show-names
    done = geon("import", str(ENCODER), "--dim", "batch=2")
    # then it says what is missing
    assert (done.returncode, done.stderr) == (
        2, "geon import: no -o OUT.json; expected the document's path, or --show-names\n",
    )  # fmt: skip


def test_the_megatron_plan_of_the_inferred_names_splits_heads_and_ffn(tmp_path: Path) -> None:
    # given the encoder imported with the inferred names (as the web import names it)
    _import(tmp_path, "--names", "inferred")
    graph = Graph.from_json(json.loads((tmp_path / "enc.json").read_text()))
    # when a plan is searched on 2 devices whose memory does not hold the weights twice
    profile = load_profile("h100-sxm-8").to_json()
    profile["device"]["memory"] = 40000
    found = search_plans(graph, {"tp": 2}, parse_profile(profile))
    # then the best is Megatron's (Shoeybi et al. 2019), read by name: heads and the MLP width
    # (docs/cost-model.md; the same split as d4, d64 under the names as imported)
    assert found["best"]["axisMapping"] == {"heads": "tp", "ffn": "tp"}

"""``python -m geon check`` and ``python -m geon shard``, run as a user runs them."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from tests.processes import geon

OP = "26434d32-ccbc-442f-9d78-8bf158b00c6b"
T1 = "0308d788-0064-4494-9c18-6e4c3d078b13"


def example_text() -> str:
    return resources.files("geon").joinpath("examples/loom_sharded_add.json").read_text("utf-8")


@pytest.fixture
def example(tmp_path: Path) -> Path:
    path = tmp_path / "loom.json"
    path.write_text(example_text(), encoding="utf-8")
    return path


def test_check_of_a_clean_document_prints_nothing_and_exits_0(example: Path) -> None:
    done = geon("check", str(example))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_check_prints_one_json_issue_per_line_and_exits_1(tmp_path: Path) -> None:
    # given the example with a bad dtype and a node with a non-UUID id
    doc = json.loads(example_text())
    doc["nodes"][0]["body"]["dtype"] = "int31"
    doc["nodes"].append(
        {
            "id": "n1",
            "type": doc["nodes"][0]["type"].replace("Tensor", "Note"),
            "body": {"message": "m"},
        }
    )
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    # when checked
    done = geon("check", str(path))
    # then each line is one issue in the §5 shape
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 1
    assert [(i["constraint"], i["summary"], i["nodeIds"]) for i in lines] == [
        ("TensorDTypesAreValid", "Tensor dtype is not valid", [T1]),
        ("SchemaConformance", "Node id is not a UUID", ["n1"]),
    ]
    assert sorted(lines[0]) == [
        "constraint",
        "contexts",
        "message",
        "nodeIds",
        "params",
        "severity",
        "summary",
        "type",
    ]


def test_check_of_a_file_that_is_not_json_reports_an_issue(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"id": "x", "nodes": [', encoding="utf-8")
    done = geon("check", str(path))
    assert done.returncode == 1
    assert done.stderr == ""
    [issue] = [json.loads(line) for line in done.stdout.splitlines()]
    assert (issue["constraint"], issue["summary"], issue["message"]) == (
        "SchemaConformance",
        "Document is not valid JSON",
        "document is not valid JSON: Expecting value at line 1 column 23; expected a JSON object",
    )


def test_check_reads_stdin() -> None:
    done = geon("check", "-", stdin=example_text())
    assert (done.returncode, done.stdout) == (0, "")


def test_warnings_alone_exit_0(tmp_path: Path) -> None:
    doc = json.loads(example_text())
    doc["nodes"].append(
        {"id": "00000000-0000-4000-8000-000000000001", "type": "urn:x:Thing", "body": {}}
    )
    path = tmp_path / "warn.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    done = geon("check", str(path))
    assert done.returncode == 0
    assert [json.loads(line)["severity"] for line in done.stdout.splitlines()] == ["warning"]


def test_check_of_a_missing_file_exits_2_with_a_message(tmp_path: Path) -> None:
    done = geon("check", str(tmp_path / "nope.json"))
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        f'geon check: cannot read "{tmp_path / "nope.json"}": No such file or directory\n'
    )


def apps_of(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [n for n in doc["nodes"] if n["body"].get("operationId") == OP]


@pytest.mark.parametrize(
    ("args", "indexes"),
    [
        (["--axis", "0", "--parts", "4"], [[0, 3], [3, 6], [6, 8], [8, 10]]),
        (["--axis", "0", "--chunk", "4"], [[0, 4], [4, 8], [8, 10]]),
        (["--axis", "1", "--sizes", "2,3"], [[0, 10], [0, 10]]),
        (["--grid", "0=2,1=1"], [[0, 5], [5, 10]]),
    ],
    ids=["parts", "chunk", "sizes", "grid"],
)
def test_shard_writes_a_document_that_checks_clean(
    example: Path, tmp_path: Path, args: list[str], indexes: list[list[int]]
) -> None:
    out = tmp_path / "out.json"
    done = geon("shard", str(example), "--op", OP, *args, "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stderr == f'geon shard: operation "{OP}" now has {len(indexes)} applications\n'
    doc = json.loads(out.read_text(encoding="utf-8"))
    rows = [
        [
            a["tags"][next(t for t in a["tags"] if t.endswith("IPFIndex"))]["start"][0],
            a["tags"][next(t for t in a["tags"] if t.endswith("IPFIndex"))]["end"][0],
        ]
        for a in apps_of(doc)
    ]
    assert rows == indexes
    assert geon("check", str(out)).returncode == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--op", "nope", "--axis", "0", "--parts", "2"],
            'geon shard: operation "nope" does not exist; expected the id of one of the 1 '
            "operations in the graph\n",
        ),
        (
            ["--op", OP, "--axis", "5", "--parts", "2"],
            f'geon shard: dim "5" is not an index dim of operation "{OP}"; expected 0..1\n',
        ),
        (
            ["--op", OP, "--axis", "H", "--parts", "2"],
            f'geon shard: axis "H" cannot be resolved: operation "{OP}" has no IndexAxes; '
            "expected a dim number 0..1\n",
        ),
        (
            ["--op", OP, "--parts", "2"],
            "geon shard: --axis is required with --parts, --chunk or --sizes\n",
        ),
        (
            ["--op", OP, "--axis", "0", "--sizes", "a,b"],
            'geon shard: --sizes "a,b" is invalid; expected comma-separated integers such as '
            "4,4,2\n",
        ),
        (
            ["--op", OP, "--grid", "0:2"],
            'geon shard: grid "0:2" is invalid; expected DIM=K pairs such as H=2,N=2\n',
        ),
    ],
    ids=[
        "missing-op",
        "bad-dim",
        "axis-name-without-index-axes",
        "no-axis",
        "bad-sizes",
        "bad-grid",
    ],
)
def test_shard_refuses_with_a_message_and_writes_nothing(
    example: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    out = tmp_path / "out.json"
    done = geon("shard", str(example), *args, "-o", str(out))
    assert (done.returncode, done.stdout, done.stderr) == (2, "", message)
    assert not out.exists()


def test_shard_of_a_file_that_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text("{", encoding="utf-8")
    done = geon("shard", str(path), "--op", OP, "--axis", "0", "--parts", "2")
    assert done.returncode == 2
    assert done.stderr == (
        f'geon shard: "{path}" is not valid JSON: Expecting property name enclosed in double '
        "quotes: line 1 column 2 (char 1); run geon check to see why\n"
    )


def test_shard_to_stdout_keeps_the_rest_of_the_document(example: Path) -> None:
    done = geon("shard", str(example), "--op", OP, "--axis", "0", "--parts", "2")
    assert done.returncode == 0
    before = json.loads(example_text())
    after = json.loads(done.stdout)
    keep = [n for n in before["nodes"] if n["body"].get("operationId") != OP]
    assert [n for n in after["nodes"] if n["body"].get("operationId") != OP] == keep


# --- padded reads: pad and a padded conv2d check clean, shard and run with no difference -------


@pytest.mark.parametrize(
    ("slug", "op_label", "axis"),
    [("pad-new-axis", "padded", "T2"), ("conv2d-halos", "features", "P")],
    ids=["pad", "conv2d-padding-1"],
)
def test_padded_gallery_graph_checks_shards_and_runs_sharded_exactly(
    tmp_path: Path, slug: str, op_label: str, axis: str
) -> None:
    # given a gallery graph whose operation reads past its input (zero padding)
    from geon.core.graph import OPERATION, TENSOR
    from geon.examples.gallery import build

    doc = build(slug).to_json()
    out = next(n["id"] for n in doc["nodes"] if n["type"] == TENSOR and n.get("label") == op_label)
    op = next(
        n["id"]
        for n in doc["nodes"]
        if n["type"] == OPERATION and n["body"]["outputs"]["result"][0]["tensorId"] == out
    )
    path = tmp_path / f"{slug}.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    # when it is checked, re-sharded into 4 along the padded axis, checked and run both ways
    checked = geon("check", str(path))
    sharded = tmp_path / "sharded.json"
    cut = geon("shard", str(path), "--op", op, "--axis", axis, "--parts", "4", "-o", str(sharded))
    rechecked = geon("check", str(sharded))
    logical = geon("run", str(sharded))
    both = geon("run", str(sharded), "--sharded")
    # then nothing is reported and the sharded run equals the logical one exactly
    assert (checked.returncode, checked.stdout) == (0, "")
    assert (cut.returncode, cut.stderr) == (
        0,
        f'geon shard: operation "{op}" now has 4 applications\n',
    )
    assert (rechecked.returncode, rechecked.stdout) == (0, "")
    assert (logical.returncode, logical.stderr) == (0, "")
    assert (both.returncode, both.stderr) == (0, "")
    assert json.loads(both.stdout)["max_abs_diff"] == {op_label: 0.0}
    assert json.loads(both.stdout)["outputs"] == json.loads(logical.stdout)["outputs"]

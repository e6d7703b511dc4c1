"""``geon cost`` (issue 16's CLI contract): one JSON object on stdout, exit 0; a refused file,
document or profile exits 2 with one line on stderr."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from geon import core as gc
from geon.cli import cost
from geon.core.graph import APPLICATION, MESH, PLACEMENT
from tests.core.test_costmodel_collectives import mlp


def _cost(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser()
    cost.add_arguments(parser)
    code = cost.main(parser.parse_args(list(argv)))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def all_gather_doc(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    g, ids = mlp("N", "D")
    path = tmp_path / "mlp.json"
    path.write_text(json.dumps(g.to_json()))
    return path, ids


def test_cost_prints_one_object_with_the_contract_keys(
    capsys: pytest.CaptureFixture[str], all_gather_doc: tuple[Path, dict[str, str]]
) -> None:
    path, ids = all_gather_doc
    code, out, err = _cost(capsys, str(path))
    assert (code, err) == (0, "")
    assert out.count("\n") == 1
    report = json.loads(out)
    assert list(report) == ["profile", "collectives", "devices", "time", "memory"]
    assert report["profile"]["name"] == "h100-sxm-8"
    assert [(c["kind"], c["tensor"], c["bytes"]) for c in report["collectives"]] == [
        ("all-gather", ids["a"], 512)
    ]
    assert set(report["devices"][0]) >= {
        "mesh",
        "coords",
        "flops",
        "computeSeconds",
        "commSeconds",
        "peakBytes",
    }
    assert set(report["time"]) == {"lower", "upper"}
    assert report["time"]["lower"] <= report["time"]["upper"]


def test_cost_takes_a_shipped_profile_or_a_file(
    capsys: pytest.CaptureFixture[str],
    all_gather_doc: tuple[Path, dict[str, str]],
    tmp_path: Path,
) -> None:
    path, _ = all_gather_doc
    code, out, _ = _cost(capsys, str(path), "--profile", "tpu-v5e-16")
    assert (code, json.loads(out)["profile"]["name"]) == (0, "tpu-v5e-16")
    mine = json.loads(out)["profile"]
    mine["name"] = "mine"
    profile = tmp_path / "mine.json"
    profile.write_text(json.dumps(mine))
    code, out, _ = _cost(capsys, str(path), "--profile", str(profile))
    assert (code, json.loads(out)["profile"]) == (0, mine)


@pytest.mark.parametrize(
    ("content", "argv", "message"),
    [
        ("{", (), "is not valid JSON"),
        ("[]", (), "geon cost: "),
        (None, ("--profile", "h200"), 'profile "h200" is neither a shipped profile'),
        (
            json.dumps({"name": "p"}),
            ("--profile", "PROFILE"),
            'profile field (top level) lacks "device"',
        ),
    ],
    ids=["not-json", "not-a-document", "unknown-profile", "bad-profile"],
)
def test_cost_refuses_with_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    all_gather_doc: tuple[Path, dict[str, str]],
    content: str | None,
    argv: tuple[str, ...],
    message: str,
) -> None:
    path, _ = all_gather_doc
    if content is not None and argv:
        (tmp_path / "profile.json").write_text(content)
        argv = tuple(str(tmp_path / "profile.json") if a == "PROFILE" else a for a in argv)
    elif content is not None:
        path = tmp_path / "bad.json"
        path.write_text(content)
    code, out, err = _cost(capsys, str(path), *argv)
    assert (code, out) == (2, "")
    assert err.startswith("geon cost: ") and message in err
    assert err.count("\n") == 1


def test_cost_of_a_missing_file_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _cost(capsys, "/nonexistent/doc.json")
    assert (code, out) == (2, "")
    assert err == 'geon cost: cannot read "/nonexistent/doc.json": No such file or directory\n'


def _broken(doc: dict[str, Any], how: str) -> dict[str, Any]:
    for node in doc["nodes"]:
        if how == "coords" and node["type"] == APPLICATION:
            node["tags"][PLACEMENT]["coords"] = [99]
        if how == "mesh" and node["type"] == MESH:
            node["body"]["axes"] = {"d": "four"}
        if how == "ranges" and node["type"] == APPLICATION:
            node["body"]["inputs"] = {"x": [{"tensorId": 5, "range": {"start": ["a"]}}]}
        if how == "operation" and node["type"] == APPLICATION:
            node["body"]["operationId"] = {"not": "an id"}
        if how == "rank" and node["type"] == APPLICATION:
            for items in node["body"]["inputs"].values():
                items[0]["range"] = {"start": [0], "end": [1]}
    return doc


@pytest.mark.parametrize("how", ["coords", "mesh", "ranges", "operation", "rank"])
def test_malformed_nodes_are_left_out_without_a_traceback(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    all_gather_doc: tuple[Path, dict[str, str]],
    how: str,
) -> None:
    path, _ = all_gather_doc
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(_broken(json.loads(path.read_text()), how)))
    code, out, err = _cost(capsys, str(broken))
    assert (code, err) == (0, "")
    assert set(json.loads(out)) == {"profile", "collectives", "devices", "time", "memory"}


def _unplaced_mlp(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    N, D, F = gc.Axis("N", 8), gc.Axis("D", 4), gc.Axis("F", 16)
    x = gc.placeholder(axes=[N, D], name="x", dtype="float32")
    h = gc.dot(x, gc.placeholder(axes=[D - 1, F], name="w1", dtype="float32"), name="h")
    a = gc.relu(h, name="a")
    y = gc.dot(a, gc.placeholder(axes=[F - 1, D], name="w2", dtype="float32"), name="y")
    path = tmp_path / "mlp.json"
    path.write_text(json.dumps(gc.graph([y]).to_json()))
    assert y.op_id is not None
    return path, {"a": a.id, "dot2": y.op_id}


@pytest.mark.parametrize(
    ("spec", "kinds"),
    [({}, []), ({"dot2": {"over": {"D": "d"}}}, [("all-gather", 512)])],
    ids=["data-parallel", "second-dot-over-D"],
)
def test_cost_writes_a_plan_in_first(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    spec: dict[str, Any],
    kinds: list[tuple[str, int]],
) -> None:
    # given the unplaced MLP and a plan mapping N to the 4 devices of d (the second dot over D
    # instead, in the second case)
    path, ids = _unplaced_mlp(tmp_path)
    plan = {
        "name": "p",
        "mesh": {"name": "m", "axes": {"d": 4}},
        "axisMapping": {"N": "d"},
        "spec": {ids[op]: entry for op, entry in spec.items()},
    }
    plan_path = tmp_path / "plan.json"
    plan_path.write_text(json.dumps(plan))
    # when costed with --plan
    code, out, err = _cost(capsys, str(path), "--plan", str(plan_path))
    # then the plan's collectives are reported: none for data parallel, one all-gather of a
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert [(c["kind"], c["bytes"]) for c in report["collectives"]] == kinds
    assert len(report["devices"]) == 4


def test_cost_refuses_a_plan_that_does_not_fit_with_exit_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path, _ = _unplaced_mlp(tmp_path)
    plan_path = tmp_path / "plan.json"
    plan_path.write_text(
        json.dumps({"name": "p", "mesh": {"axes": {"d": 4}}, "spec": {"nope": {"dim": "N"}}})
    )
    code, out, err = _cost(capsys, str(path), "--plan", str(plan_path))
    assert (code, out) == (1, "")
    assert err.startswith(f'geon cost: plan "p" does not fit "{path}": ')
    assert err.count("\n") == 1


def test_cost_refuses_a_malformed_plan_with_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path, _ = _unplaced_mlp(tmp_path)
    plan_path = tmp_path / "plan.json"
    plan_path.write_text(json.dumps({"mesh": 5}))
    code, out, err = _cost(capsys, str(path), "--plan", str(plan_path))
    assert (code, out) == (2, "")
    assert err.startswith(f'geon cost: "{plan_path}" is not a plan: ')
    assert err.count("\n") == 1


def test_python_m_geon_cost_runs_the_verb(all_gather_doc: tuple[Path, dict[str, str]]) -> None:
    path, ids = all_gather_doc
    done = subprocess.run(
        [sys.executable, "-m", "geon", "cost", str(path), "--profile", "cpu-host"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    report = json.loads(done.stdout)
    assert (report["profile"]["name"], report["collectives"][0]["tensor"]) == ("cpu-host", ids["a"])

"""``python -m geon puzzle check`` (issue 19's CLI contract): one JSON object on stdout, exit 0
solved, 1 not solved, 2 malformed file with one line on stderr."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from geon import core as gc

ROOT = Path(__file__).resolve().parents[2]
PUZZLES = ROOT / "geon" / "learn" / "content" / "puzzles"
PUZZLE = PUZZLES / "matvec_dual.json"
WRONG = Path(__file__).resolve().parent / "wrong" / "matvec_dual.json"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "geon", "puzzle", "check", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def test_a_solved_puzzle_exits_0(tmp_path: Path) -> None:
    solution = tmp_path / "solution.json"
    solution.write_text(json.dumps(json.loads(PUZZLE.read_text())["reference"]))
    done = _run(str(PUZZLE), str(solution), "--draws", "60", "--seed", "7")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"solved": True, "draws": 60}


def test_a_wrong_solution_exits_1_with_a_counterexample() -> None:
    done = _run(str(PUZZLE), str(WRONG))
    assert done.returncode == 1, done.stderr
    out = json.loads(done.stdout)
    assert out["solved"] is False and out["draws"] >= 1
    example = out["counterexample"]
    assert set(example) == {"axes", "message", "inputs", "got", "expected"}
    assert set(example["axes"]) == {"H", "W"}
    h, w = example["axes"]["H"], example["axes"]["W"]
    # the inputs that failed, by label with their axes, and the two results, in H
    assert example["inputs"]["m"]["axes"] == ["H", "W-1"]
    assert [len(row) for row in example["inputs"]["m"]["values"]] == [w] * h
    assert example["inputs"]["v"]["axes"] == ["W"] and len(example["inputs"]["v"]["values"]) == w
    assert example["got"]["axes"] == example["expected"]["axes"] == ["H"]
    assert len(example["got"]["values"]) == len(example["expected"]["values"]) == h
    # the message's cell is where got and expected differ, with their values
    cell = int(re.search(r"at \(H=(\d+)\)", example["message"]).group(1))  # type: ignore[union-attr]
    got, expected = example["got"]["values"][cell], example["expected"]["values"][cell]
    assert got != expected and f"you get {got}, expected {expected}" in example["message"]
    # the expected values are the matrix-vector product of the inputs shown
    m, v = example["inputs"]["m"]["values"], example["inputs"]["v"]["values"]
    assert example["expected"]["values"] == [
        sum(a * b for a, b in zip(row, v, strict=True)) for row in m
    ]


def test_the_puzzles_own_pattern_is_no_issue_there(tmp_path: Path) -> None:
    """An outer product built the way a student does (a * b, no result axes named) solves the
    outer-product puzzle with no AccidentalBroadcast listed; geon check warns about it."""
    i_axis, j_axis = gc.Axis("I", 3), gc.Axis("J", 2)
    a = gc.placeholder(axes=[i_axis], name="a", dtype="float64")
    b = gc.placeholder(axes=[j_axis], name="b", dtype="float64")
    solution = tmp_path / "outer.json"
    solution.write_text(json.dumps(gc.graph([a * b]).to_json()))
    done = _run(str(PUZZLES / "outer_product.json"), str(solution))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"solved": True, "draws": 50}
    checked = subprocess.run(
        [sys.executable, "-m", "geon", "check", str(solution)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert '"constraint": "AccidentalBroadcast"' in checked.stdout


def test_the_solutions_issues_are_listed_by_name_never_by_id() -> None:
    """The cast_axes pitfall's wrong answer broadcasts H against H2: the CLI lists that issue
    as the editor shows it, nodes by label and unnamed tensors by their axes."""
    done = _run(
        str(PUZZLES / "cast_axes_pitfall.json"), str(WRONG.parent / "cast_axes_pitfall.json")
    )
    assert done.returncode == 1, done.stderr
    out = json.loads(done.stdout)
    (issue,) = out["issues"]
    assert set(issue) == {"severity", "summary", "message", "nodes"}
    assert issue["severity"] == "warning" and "H2" in issue["message"]
    assert "the unnamed tensor (H2, N)" in issue["message"]
    assert not re.search(r"[0-9a-f]{8}-[0-9a-f]{4}-", done.stdout), done.stdout
    # a failure that holds at every length leaves the lengths out
    rows = _run(str(PUZZLES / "row_sums.json"), str(WRONG.parent / "row_sums.json"))
    example = json.loads(rows.stdout)["counterexample"]
    assert example["axes"] == {} and example["message"].startswith("your result has axes (W)")
    assert example["got"]["axes"] == ["W"] and example["expected"]["axes"] == ["H"]


def test_malformed_files_exit_2_with_one_line_naming_the_problem(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    not_puzzle = tmp_path / "not_puzzle.json"
    not_puzzle.write_text(json.dumps({"title": "x"}))
    for args, named in [
        ((str(PUZZLE), str(bad)), "is not JSON"),
        ((str(not_puzzle), str(WRONG)), '"axes"'),
        ((str(PUZZLE), str(tmp_path / "missing.json")), "cannot read"),
        ((str(PUZZLE), str(WRONG), "--draws", "0"), "draws"),
    ]:
        done = _run(*args)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert done.stdout == ""
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and named in lines[0], done.stderr
        assert "Traceback" not in done.stderr

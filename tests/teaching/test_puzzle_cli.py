"""``python -m geon puzzle check`` (issue 19's CLI contract): one JSON object on stdout, exit 0
solved, 1 not solved, 2 malformed file with one line on stderr."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PUZZLE = ROOT / "geon" / "teaching" / "puzzles" / "matvec_dual.json"
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
    assert set(out["counterexample"]) == {"axes", "message"}
    assert set(out["counterexample"]["axes"]) == {"H", "W"}
    assert "expected" in out["counterexample"]["message"]


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

"""Every shipped puzzle is solved by its reference and failed, with a readable counterexample in
axis names, by a plausible wrong answer (tests/teaching/wrong/); the check's rules (draws,
kernels, checker errors, bounds) hold."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from geon.learn.content.puzzles import MAX_AXIS_LENGTH, PuzzleError, _draws, check_puzzle
from geon.learn.content.shipped import PUZZLES

PUZZLE_DIR = Path(__file__).resolve().parents[2] / "geon" / "learn" / "content" / "puzzles"
WRONG_DIR = Path(__file__).resolve().parent / "wrong"
SLUGS = sorted(p.stem for p in PUZZLE_DIR.glob("*.json"))


def _load(path: Path) -> Any:
    return json.loads(path.read_text())


def test_a_dozen_puzzles_ship_one_per_builder() -> None:
    assert len(SLUGS) >= 12
    assert sorted(PUZZLES) == SLUGS


@pytest.mark.parametrize("slug", SLUGS)
def test_the_reference_solves_its_puzzle(slug: str) -> None:
    puzzle = _load(PUZZLE_DIR / f"{slug}.json")
    assert set(puzzle) == {"title", "description", "axes", "inputs", "allowedKernels", "reference"}
    result = check_puzzle(puzzle, puzzle["reference"]).to_json()
    assert result == {"solved": True, "draws": 50}


@pytest.mark.parametrize("slug", SLUGS)
def test_a_plausible_wrong_answer_gets_a_readable_counterexample(slug: str) -> None:
    puzzle = _load(PUZZLE_DIR / f"{slug}.json")
    result = check_puzzle(puzzle, _load(WRONG_DIR / f"{slug}.json")).to_json()
    assert result["solved"] is False
    example = result["counterexample"]
    axes = example["axes"]
    message = example["message"]
    if message.startswith("your result has"):  # an axis mismatch holds at any length
        assert axes == {}
    else:
        assert set(axes) == set(puzzle["axes"])
        # the draw is spelled out in axis names
        assert message.startswith("with " + ", ".join(f"{n}={v}" for n, v in axes.items()) + ":")
    for name, length in axes.items():
        assert puzzle["axes"][name]["min"] <= length <= puzzle["axes"][name]["max"]
    # the inputs that failed, by label, with their axes; what came out and what was expected
    assert set(example["inputs"]) == set(puzzle["inputs"])
    for label, shown in example["inputs"].items():
        assert shown["axes"] == puzzle["inputs"][label]["axes"]
        assert _shape(shown["values"]) == tuple(axes_or_one(axes, r) for r in shown["axes"])
    assert example["expected"]["values"] is not None
    # no traceback or node id leaks, in the message or the issues
    assert "Traceback" not in message
    assert not re.search(r"[0-9a-f]{8}-[0-9a-f]{4}-", message), message
    assert re.search(r"you get .+, expected |has axes|does not run", message), message


def _shape(values: Any) -> tuple[int, ...]:
    shape = []
    while isinstance(values, list):
        shape.append(len(values))
        values = values[0] if values else None
    return tuple(shape)


def axes_or_one(axes: dict[str, int], ref: str) -> int:
    """The length of axis reference ``ref`` in a draw (an axis mismatch's draw is not named:
    its inputs come from the smallest draw, every axis at its min, 1 in every shipped puzzle)."""
    return axes.get(ref.split("-")[0], 1)


def test_a_wrong_value_is_explained_at_a_cell_in_axis_names() -> None:
    puzzle = _load(PUZZLE_DIR / "broadcast_add.json")
    result = check_puzzle(puzzle, _load(WRONG_DIR / "broadcast_add.json"))
    assert result.message is not None
    assert re.fullmatch(
        r"with H=\d+, W=\d+: at \(H=\d+, W=\d+\) you get -?[\d.]+, expected -?[\d.]+",
        result.message,
    ), result.message


def test_draws_include_all_ones_and_each_axis_at_one() -> None:
    axes = {"H": (1, 5), "W": (1, 5), "N": (1, 5)}
    draws = _draws(axes, 50, seed=3)
    assert len(draws) == 50
    assert draws[0] == {"H": 1, "W": 1, "N": 1}
    for name in axes:
        assert any(d[name] == 1 and any(d[o] > 1 for o in axes if o != name) for d in draws)
    assert all(1 <= d[n] <= 5 for d in draws for n in axes)
    assert len({tuple(d.values()) for d in draws}) > 10  # random, not one draw repeated


def test_a_kernel_outside_allowed_kernels_is_not_solved_and_named() -> None:
    puzzle = _load(PUZZLE_DIR / "row_sums.json")
    puzzle["allowedKernels"] = ["op:max"]
    result = check_puzzle(puzzle, puzzle["reference"])
    assert not result.solved and result.draws == 0
    assert result.message is not None and "op:sum" in result.message
    assert "allowed kernels: op:max" in result.message


def test_a_solution_with_checker_errors_is_not_solved_and_says_the_first() -> None:
    puzzle = _load(PUZZLE_DIR / "row_sums.json")
    broken = copy.deepcopy(puzzle["reference"])
    for node in broken["nodes"]:
        if node["type"].endswith("/Tensor") and node.get("label") == "out":
            node["body"]["dtype"] = "float99"
    result = check_puzzle(puzzle, broken)
    assert not result.solved
    assert result.message is not None
    assert result.message.startswith("the solution does not check: ")
    assert "float99" in result.message


def test_a_missing_input_is_named() -> None:
    puzzle = _load(PUZZLE_DIR / "outer_product.json")
    puzzle["inputs"]["c"] = {"axes": ["I"], "dtype": "float64"}
    result = check_puzzle(puzzle, puzzle["reference"])
    assert not result.solved and result.message is not None and '"c"' in result.message


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda p: p.pop("reference"), '"reference"'),
        (lambda p: p["axes"].update(H={"min": 0, "max": 3}), "min 0"),
        (lambda p: p["axes"].update(H={"min": 1, "max": MAX_AXIS_LENGTH + 1}), "max"),
        (lambda p: p["inputs"]["x"].update(dtype="float7"), "float7"),
        (lambda p: p["inputs"]["x"].update(axes=["Q"]), '"Q"'),
        (lambda p: p.update(allowedKernels="op:sum"), "allowedKernels"),
        (lambda p: p.update(reference={"nodes": 3}), "reference"),
    ],
)
def test_a_malformed_puzzle_is_refused_naming_what_is_wrong(change: Any, named: str) -> None:
    puzzle = _load(PUZZLE_DIR / "row_sums.json")
    solution = copy.deepcopy(puzzle["reference"])
    change(puzzle)
    with pytest.raises(PuzzleError, match=re.escape(named)):
        check_puzzle(puzzle, solution)


@pytest.mark.parametrize("draws", [0, 1001, True, "5"])
def test_draws_are_bounded(draws: Any) -> None:
    puzzle = _load(PUZZLE_DIR / "row_sums.json")
    with pytest.raises(PuzzleError, match="draws"):
        check_puzzle(puzzle, puzzle["reference"], draws=draws)


def test_the_cells_per_draw_are_bounded_before_work_starts() -> None:
    puzzle = _load(PUZZLE_DIR / "transpose_rule.json")
    for name in puzzle["axes"]:
        puzzle["axes"][name] = {"min": 1, "max": MAX_AXIS_LENGTH}
    with pytest.raises(PuzzleError, match="cells"):
        check_puzzle(puzzle, puzzle["reference"])


def test_a_solution_may_order_axes_its_own_way() -> None:
    # given broadcast_add solved with x declared as (W, H): the same axes, another layout
    from geon import core as gc

    puzzle = _load(PUZZLE_DIR / "broadcast_add.json")
    H, W = gc.Axis("H", 2), gc.Axis("W", 3)
    x = gc.placeholder(axes=[W, H], name="x", dtype="float64")
    b = gc.placeholder(axes=[W], name="b", dtype="float64")
    solution = gc.graph([gc.add(x, b, name="mine")]).to_json()
    # then it is solved: axes compare as a set, values in the reference's order
    assert check_puzzle(puzzle, solution, draws=20).to_json() == {"solved": True, "draws": 20}


def test_an_input_of_another_dtype_is_named() -> None:
    puzzle = _load(PUZZLE_DIR / "row_sums.json")
    result = check_puzzle(puzzle, _retyped(puzzle["reference"], "x", "float32"))
    assert not result.solved and result.message is not None
    assert 'input "x" has dtype float32; the puzzle gives it float64' in result.message


def _retyped(doc: Any, label: str, dtype: str) -> Any:
    doc = copy.deepcopy(doc)
    for node in doc["nodes"]:
        if node.get("label") == label:
            node["body"]["dtype"] = dtype
    return doc

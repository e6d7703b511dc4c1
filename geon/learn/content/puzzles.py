"""Puzzles with property checks (issue 19): :func:`check_puzzle` runs a student's solution and the
puzzle's hidden reference on many draws of axis lengths and random values, and explains the
first difference in axis names. See ``README.md`` in this package for the file shapes.

>>> import json
>>> from importlib import resources
>>> puzzle = json.loads(resources.files("geon.learn.content").joinpath(
...     "puzzles/row_sums.json").read_text())
>>> check_puzzle(puzzle, puzzle["reference"], draws=5).to_json()
{'solved': True, 'draws': 5}
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from geon.core.checks import ACCIDENTAL_BROADCAST, check_document
from geon.core.documents import load_document
from geon.core.dtypes import DTYPES
from geon.core.errors import GeonError, quote
from geon.core.graph import Graph, Node
from geon.learn.content.documents import input_tensors, kernels, resize, result_tensor, tensor_axes

__all__ = [
    "MAX_AXIS_LENGTH",
    "MAX_CELLS",
    "MAX_DRAWS",
    "PuzzleError",
    "PuzzleResult",
    "check_puzzle",
    "puzzle_issues",
    "quiet_constraints",
    "read_puzzle",
]

MAX_DRAWS = 1000
"""At most this many draws per check."""
MAX_AXIS_LENGTH = 64
"""An axis's ``max`` may be at most this (the executor runs each draw in memory)."""
MAX_CELLS = 1 << 16
"""The product of every axis's ``max`` (the most cells any tensor of a draw can hold)."""
SHOWN_CELLS = 256
"""A counterexample's tensor holds its values when it has at most this many cells (else
``values`` is null): the failing draw is first shrunk (:func:`_shrink`), so this is rare."""
SHRINK_RUNS = 40
"""At most this many extra runs look for a smaller failing draw."""
RTOL, ATOL = 1e-5, 1e-6
"""Values agree when ``|got - expected| <= ATOL + RTOL * |expected|`` (NaN equals NaN)."""

_KEYS = ("title", "description", "axes", "inputs", "allowedKernels", "reference")


class PuzzleError(GeonError):
    """The puzzle (or the solution) is malformed; the message names the bad value."""


@dataclass(frozen=True)
class PuzzleResult:
    """Whether the solution is right, how many draws ran, and the first failure explained."""

    solved: bool
    draws: int
    axes: dict[str, int] | None = None
    message: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    issues: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """``{"solved", "draws", "counterexample"?: {"axes", "message", "inputs"?, "got"?,
        "expected"?}, "issues"?}``: ``inputs`` by label and ``got``/``expected`` are
        ``{"axes", "values"}`` (values nested lists in those axes' order) when a draw failed;
        ``issues`` the solution's issues as the editor shows them inside the puzzle."""
        out: dict[str, Any] = {"solved": self.solved, "draws": self.draws}
        if self.message is not None:
            out["counterexample"] = {
                "axes": dict(self.axes or {}),
                "message": self.message,
                **self.extra,
            }
        if self.issues:
            out["issues"] = list(self.issues)
        return out


def _fail(what: str) -> PuzzleError:
    return PuzzleError(f"puzzle: {what}")


def read_puzzle(puzzle: Any) -> tuple[dict[str, tuple[int, int]], dict[str, Any], Graph]:
    """Validate a parsed puzzle: ``(axes as (min, max), inputs, reference graph)``; bounds are
    checked before any work (:data:`MAX_AXIS_LENGTH`, :data:`MAX_CELLS`)."""
    if not isinstance(puzzle, dict):
        raise _fail(f"the file holds {type(puzzle).__name__}; expected a JSON object")
    missing = [k for k in _KEYS if k not in puzzle]
    if missing:
        raise _fail(f"missing {', '.join(quote(k) for k in missing)}; expected keys {list(_KEYS)}")
    axes_in = puzzle["axes"]
    if not isinstance(axes_in, dict) or not axes_in:
        raise _fail('"axes" must be an object {name: {"min", "max"}} with at least one axis')
    axes: dict[str, tuple[int, int]] = {}
    for name, span in axes_in.items():
        lo = span.get("min") if isinstance(span, dict) else None
        hi = span.get("max") if isinstance(span, dict) else None
        if not (isinstance(lo, int) and isinstance(hi, int)) or isinstance(lo, bool):
            raise _fail(f'axis {quote(name)} is {quote(span)}; expected {{"min": int, "max": int}}')
        if not 1 <= lo <= hi <= MAX_AXIS_LENGTH:
            raise _fail(
                f"axis {quote(name)} has min {lo} and max {hi}; expected 1 <= min <= max <= "
                f"{MAX_AXIS_LENGTH}"
            )
        axes[name] = (lo, hi)
    cells = math.prod(hi for _, hi in axes.values())
    if cells > MAX_CELLS:
        raise _fail(
            f"the axes' max lengths multiply to {cells} cells; expected at most {MAX_CELLS}"
        )
    inputs = puzzle["inputs"]
    if not isinstance(inputs, dict) or not inputs:
        raise _fail('"inputs" must be an object {label: {"axes": [...], "dtype"}}')
    for label, spec in inputs.items():
        refs = spec.get("axes") if isinstance(spec, dict) else None
        if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
            raise _fail(f"input {quote(label)} has axes {quote(refs)}; expected a list of names")
        unknown = [r for r in refs if _base(r) not in axes]
        if unknown:
            raise _fail(f'input {quote(label)} names axes {quote(unknown)} not in "axes"')
        if spec.get("dtype") not in DTYPES:
            raise _fail(f"input {quote(label)} has dtype {quote(spec.get('dtype'))}")
    allowed = puzzle["allowedKernels"]
    if not isinstance(allowed, list) or not all(isinstance(k, str) for k in allowed):
        raise _fail('"allowedKernels" must be a list of kernel names such as "op:add"')
    reference = _load(puzzle["reference"], "the reference")
    errors = [i for i in check_document(puzzle["reference"]) if i.severity == "error"]
    if errors:
        raise _fail(f"the reference does not check: {errors[0].message}")
    return axes, inputs, reference


def _base(ref: str) -> str:
    """The axis name of a reference (``W-1`` -> ``W``)."""
    return ref.split("-")[0].split("+")[0]


def _load(document: Any, what: str) -> Graph:
    graph, issues = load_document(document)
    if graph is None:
        reason = issues[0].message if issues else "not a document"
        raise PuzzleError(f"{what} is not a geon document: {reason}")
    return graph


def _draws(axes: Mapping[str, tuple[int, int]], count: int, seed: int) -> list[dict[str, int]]:
    """All at their smallest (1 where allowed), each axis at its smallest with the others
    random, then random lengths."""
    rng = np.random.default_rng(seed)
    names = list(axes)

    def rand() -> dict[str, int]:
        return {n: int(rng.integers(axes[n][0], axes[n][1] + 1)) for n in names}

    out = [{n: axes[n][0] for n in names}]
    for n in names:
        d = rand()
        d[n] = axes[n][0]
        out.append(d)
    while len(out) < count:
        out.append(rand())
    return out


def _values(shape: tuple[int, ...], dtype: str, rng: np.random.Generator) -> np.ndarray:
    if dtype == "boolean":
        return rng.integers(0, 2, size=shape).astype(bool)
    values = rng.integers(-4, 5, size=shape)
    return values.astype(np.dtype(dtype if dtype != "boolean" else bool))


def _fmt(v: Any) -> str:
    """A value as a person reads it: ``5.0``, ``0.681453``, ``True``."""
    v = v.item() if hasattr(v, "item") else v
    if isinstance(v, float) and not v.is_integer():
        return f"{v:.6g}"
    return repr(v)


def _named(graph: Graph, message: str) -> str:
    """``message`` with quoted node ids replaced by the nodes' labels, or for a node without
    one by what it is ("the unnamed tensor (H, H2)"): no id reaches a person."""
    for node in graph.nodes:
        if f'"{node.id}"' not in message:
            continue
        if node.label:
            named = quote(node.label)
        else:
            kind = node.type.rsplit("/", 1)[-1].lower() or "node"
            axes = tensor_axes(node) if kind == "tensor" else []
            named = f"the unnamed {kind}" + (f" ({', '.join(axes)})" if axes else "")
        message = message.replace(f'"{node.id}"', named)
    return message


def _at(names: list[str], where: tuple[int, ...]) -> str:
    return "(" + ", ".join(f"{n}={i}" for n, i in zip(names, where, strict=True)) + ")"


def quiet_constraints(puzzle: Any) -> frozenset[str]:
    """The warnings a puzzle asks for, so never shown as a mistake inside it: the
    ``AccidentalBroadcast`` its own reference raises once its operations' result axes
    (``params.axes``, which say a broadcast is meant) are taken away — the outer product is
    the answer there, not an accident. A puzzle may also name them (``"quietConstraints"``)."""
    named = puzzle.get("quietConstraints", []) if isinstance(puzzle, dict) else []
    quiet = {c for c in named if isinstance(c, str)}
    reference = puzzle.get("reference") if isinstance(puzzle, dict) else None
    if not isinstance(reference, dict) or not isinstance(reference.get("nodes"), list):
        return frozenset(quiet)
    unnamed = copy.deepcopy(reference)
    for node in unnamed["nodes"]:
        params = node.get("body", {}).get("params") if isinstance(node, dict) else None
        if isinstance(params, dict):
            params.pop("axes", None)
    for issue in check_document(unnamed):
        if issue.constraint == ACCIDENTAL_BROADCAST and issue.severity == "warning":
            quiet.add(issue.constraint)
    return frozenset(quiet)


def puzzle_issues(puzzle: Any, solution: Any) -> list[dict[str, Any]]:
    """The solution's issues as the editor shows them inside the puzzle: the puzzle's own
    pattern left out (:func:`quiet_constraints`), each ``{"severity", "summary", "message",
    "nodes"}`` with nodes named by label, never by id."""
    graph, _ = load_document(solution)
    quiet = quiet_constraints(puzzle)
    shown = []
    for issue in check_document(solution):
        if issue.constraint in quiet and issue.severity == "warning":
            continue
        labels = []
        for node_id in issue.node_ids:
            node = graph.index.get(node_id) if graph is not None else None
            labels.append(node.label if node is not None and node.label else "unnamed")
        message = _named(graph, issue.message) if graph is not None else issue.message
        shown.append(
            {
                "severity": issue.severity,
                "summary": issue.summary,
                "message": message,
                "nodes": labels,
            }
        )
    return shown


def check_puzzle(puzzle: Any, solution: Any, draws: int = 50, seed: int = 0) -> PuzzleResult:
    """Check ``solution`` (a geon document) against ``puzzle``: at least ``draws`` draws
    (always all-ones and each axis at its smallest), the result compared with the reference's
    (axes as a set, values to tolerance, dtype). Raises :class:`PuzzleError` when the puzzle or
    the solution is malformed. A failing draw is shrunk to the smallest lengths that still fail
    the same way, and its counterexample carries the inputs, what the solution produced and
    what was expected; ``issues`` lists the solution's issues as the puzzle shows them."""
    if isinstance(draws, bool) or not isinstance(draws, int) or not 1 <= draws <= MAX_DRAWS:
        raise PuzzleError(f"draws is {draws!r}; expected an integer from 1 to {MAX_DRAWS}")
    axes, inputs, reference = read_puzzle(puzzle)
    student = _load(solution, "the solution")
    issues = puzzle_issues(puzzle, solution)
    errors = [i for i in check_document(solution) if i.severity == "error"]
    if errors:
        first = _named(student, errors[0].message)
        return PuzzleResult(False, 0, {}, f"the solution does not check: {first}", issues=issues)
    allowed = puzzle["allowedKernels"]
    bad = [k for k in kernels(student) if k not in allowed]
    if bad:
        return PuzzleResult(
            False,
            0,
            {},
            f"the solution uses {', '.join(bad)}, which this puzzle does not allow; "
            f"allowed kernels: {', '.join(allowed)}",
            issues=issues,
        )
    problem = _inputs_problem(student, inputs) or _result_problem(student)
    if problem:
        return PuzzleResult(False, 0, {}, problem, issues=issues)
    rng = np.random.default_rng(seed)
    plan = _draws(axes, draws, seed)
    for n, lengths in enumerate(plan, start=1):
        failure = _one_draw(reference, student, inputs, lengths, rng)
        if failure is not None:
            failure = _shrink(reference, student, inputs, axes, failure, seed)
            shown = {} if failure.lengths_irrelevant else failure.lengths
            return PuzzleResult(False, n, shown, failure.message, failure.data(), issues)
    return PuzzleResult(True, len(plan), issues=issues)


def _inputs_problem(student: Graph, inputs: Mapping[str, Any]) -> str | None:
    found = {t.label: t for t in input_tensors(student)}
    for label, spec in inputs.items():
        t = found.get(label)
        if t is None:
            return (
                f"the solution reads no input tensor labelled {quote(label)}; expected the inputs "
                f"{', '.join(quote(k) for k in inputs)}"
            )
        if set(tensor_axes(t)) != set(spec["axes"]):
            return (
                f"input {quote(label)} has axes ({', '.join(tensor_axes(t))}); the puzzle gives it "
                f"({', '.join(spec['axes'])})"
            )
        if t.body.get("dtype") != spec["dtype"]:
            return (
                f"input {quote(label)} has dtype {t.body.get('dtype')}; the puzzle gives it "
                f"{spec['dtype']}"
            )
    return None


def _result_problem(student: Graph) -> str | None:
    try:
        result_tensor(student)
    except GeonError as e:
        return str(e)
    return None


@dataclass
class _Failure:
    """A failing draw: its lengths, the kind of failure (``shrink`` keeps it), the message,
    and the inputs, what the solution produced and what was expected."""

    lengths: dict[str, int]
    kind: str
    message: str
    feeds: dict[str, tuple[list[str], np.ndarray]]
    got: tuple[list[str], np.ndarray] | None
    expected: tuple[list[str], np.ndarray]

    @property
    def lengths_irrelevant(self) -> bool:
        """An axis or dtype mismatch holds at every length: the lengths are left out."""
        return self.kind in ("axes", "dtype")

    def data(self) -> dict[str, Any]:
        return {
            "inputs": {label: _shown(*feed) for label, feed in self.feeds.items()},
            "got": None if self.got is None else _shown(*self.got),
            "expected": _shown(*self.expected),
        }


def _shown(axes: list[str], values: np.ndarray) -> dict[str, Any]:
    """``{"axes", "values"}``: values as nested lists (null past :data:`SHOWN_CELLS`)."""
    array = np.asarray(values)
    if array.size > SHOWN_CELLS:
        return {"axes": list(axes), "values": None}
    plain = array.tolist()
    return {"axes": list(axes), "values": _finite(plain)}


def _finite(values: Any) -> Any:
    """JSON has no NaN or infinity: they are written as the strings "nan", "inf", "-inf"."""
    if isinstance(values, list):
        return [_finite(v) for v in values]
    if isinstance(values, float) and not math.isfinite(values):
        return "nan" if math.isnan(values) else ("inf" if values > 0 else "-inf")
    return values


def _shrink(
    reference: Graph,
    student: Graph,
    inputs: Mapping[str, Any],
    axes: Mapping[str, tuple[int, int]],
    failure: _Failure,
    seed: int,
) -> _Failure:
    """A smaller draw failing the same way: each axis lowered towards its ``min`` while the
    failure's kind holds (at most :data:`SHRINK_RUNS` runs), so the counterexample is small
    enough to read."""
    runs = 0
    for name in axes:
        lo = axes[name][0]
        while failure.lengths[name] > lo and runs < SHRINK_RUNS:
            runs += 1
            smaller = {**failure.lengths, name: lo}
            rng = np.random.default_rng([seed, runs])
            found = _one_draw(reference, student, inputs, smaller, rng)
            if found is None or found.kind != failure.kind:
                smaller = {**failure.lengths, name: failure.lengths[name] - 1}
                found = _one_draw(reference, student, inputs, smaller, rng)
                runs += 1
                if found is None or found.kind != failure.kind:
                    break
            failure = found
    return failure


def _one_draw(
    reference: Graph,
    student: Graph,
    inputs: Mapping[str, Any],
    lengths: dict[str, int],
    rng: np.random.Generator,
) -> _Failure | None:
    from geon.execute import evaluate_graph

    where = "with " + ", ".join(f"{n}={v}" for n, v in lengths.items())
    feeds = {
        label: (
            list(spec["axes"]),
            _values(tuple(lengths[_base(r)] for r in spec["axes"]), spec["dtype"], rng),
        )
        for label, spec in inputs.items()
    }
    try:
        ref = resize(reference, lengths)
        ref_out = result_tensor(ref)
        expected = evaluate_graph(ref, _fed(ref, feeds), [ref_out.id])[ref_out.id]
    except Exception as e:  # the puzzle's fault: reported as a malformed puzzle
        raise PuzzleError(f"puzzle: the reference does not run {where}: {e}") from None
    want_axes = tensor_axes(ref_out)
    wanted = (list(want_axes), np.asarray(expected))

    def failed(kind: str, message: str, got: Any = None, axes: Any = None) -> _Failure:
        shown = None if got is None else (list(axes), np.asarray(got))
        return _Failure(dict(lengths), kind, message, feeds, shown, wanted)

    try:
        mine = resize(student, lengths)
        my_out = result_tensor(mine)
        got = evaluate_graph(mine, _fed(mine, feeds), [my_out.id])[my_out.id]
    except Exception as e:  # a student's graph failing to run is an answer, not a crash
        return failed("run", f"{where}: your graph does not run: {_named(student, str(e))}")
    got_axes = tensor_axes(my_out)
    if set(want_axes) != set(got_axes):
        return failed(
            "axes",
            f"your result has axes ({', '.join(got_axes)}), expected "
            f"({', '.join(want_axes)}) in any order",
            got,
            got_axes,
        )
    if my_out.body.get("dtype") != ref_out.body.get("dtype"):
        return failed(
            "dtype",
            f"your result has dtype {my_out.body.get('dtype')}, expected "
            f"{ref_out.body.get('dtype')}",
            got,
            got_axes,
        )
    got = np.transpose(np.asarray(got), [got_axes.index(a) for a in want_axes])
    expected = np.asarray(expected)
    if got.shape != expected.shape:
        return failed(
            "shape",
            f"{where}: your result has shape {got.shape}, expected {expected.shape}",
            got,
            want_axes,
        )
    close = np.isclose(got, expected, rtol=RTOL, atol=ATOL, equal_nan=True)
    if not bool(np.all(close)):
        bad = tuple(int(i) for i in np.argwhere(~close)[0])
        return failed(
            "values",
            f"{where}: at {_at(want_axes, bad)} you get {_fmt(got[bad])}, "
            f"expected {_fmt(expected[bad])}",
            got,
            want_axes,
        )
    return None


def _fed(graph: Graph, feeds: Mapping[str, tuple[list[str], np.ndarray]]) -> dict[str, np.ndarray]:
    """The feeds in each input tensor's own axis order (a solution may order them otherwise)."""
    out: dict[str, np.ndarray] = {}
    by_label: dict[str | None, Node] = {t.label: t for t in input_tensors(graph)}
    for label, (order, value) in feeds.items():
        t = by_label.get(label)
        if t is None:
            continue
        mine = tensor_axes(t)
        out[t.id] = np.transpose(value, [order.index(a) for a in mine]) if mine else value
    return out

"""Limits refuse oversized runs before anything is allocated, with messages naming the tensor
and the limit; time is checked as the run goes."""

from __future__ import annotations

import pytest

from geon import core as gc
from geon.core.errors import LimitError
from geon.execute import Limits, compile_graph, run
from geon.execute.plan import Plan


def _graph(n: int = 1000) -> gc.Tensor:
    N = gc.Axis("N", n)
    x = gc.placeholder(axes=[N], name="x")
    return gc.tanh(gc.exp(x, name="e"), name="t")


def test_too_many_elements_refused_before_allocation(monkeypatch: pytest.MonkeyPatch) -> None:
    # given a limit of 999 elements per tensor and a graph with 1000-element tensors
    allocations: list[int] = []
    monkeypatch.setattr(Plan, "_bind", lambda self: allocations.append(1))
    # when it runs / then it is refused, naming the first tensor, and nothing was allocated
    with pytest.raises(LimitError) as exc:
        run(gc.graph([_graph()]), seed=0, limits=Limits(max_elements=999))
    assert str(exc.value) == (
        'tensor "x" has 1000 elements; the limit is 999 elements per tensor (GEON_MAX_ELEMENTS)'
    )
    assert allocations == []


def test_too_many_bytes_refused_before_allocation(monkeypatch: pytest.MonkeyPatch) -> None:
    # given a limit of 10000 bytes and a run needing 8000 (arena) + 8000 (input) bytes
    allocations: list[int] = []
    monkeypatch.setattr(Plan, "_bind", lambda self: allocations.append(1))
    # when it runs / then it is refused with the totals and the largest tensor
    with pytest.raises(LimitError) as exc:
        run(gc.graph([_graph()]), seed=0, limits=Limits(max_bytes=10_000))
    assert str(exc.value) == (
        "the run needs 15.6 KiB (planned arena 7.8 KiB plus inputs); the limit is 9.8 KiB "
        '(GEON_MAX_BYTES); the largest tensor is "x" (7.8 KiB)'
    )
    assert allocations == []


def test_time_limit_stops_the_run() -> None:
    # given a time limit that has already passed when the first step ends
    t = _graph()
    g = gc.graph([t])
    # when it runs / then it stops after the first operation, naming it
    with pytest.raises(LimitError) as exc:
        run(g, seed=0, limits=Limits(max_seconds=1e-12))
    op = next(n for n in g.nodes if n.type.endswith("/Operation") and n.label == "op:exp")
    assert str(exc.value) == (
        f'the run passed its time limit of 1e-12 s after operation "{op.id}" (step 1 of 2); '
        "raise GEON_MAX_SECONDS to allow longer runs"
    )


@pytest.mark.parametrize(
    ("env", "limits"),
    [
        ({}, Limits(2**28, 6 * 2**30, 300.0)),
        (
            {"GEON_MAX_ELEMENTS": "5", "GEON_MAX_BYTES": "7", "GEON_MAX_SECONDS": "0.5"},
            Limits(5, 7, 0.5),
        ),
    ],
    ids=["defaults", "overridden"],
)
def test_limits_from_env(env: dict[str, str], limits: Limits) -> None:
    assert Limits.from_env(env) == limits


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"GEON_MAX_ELEMENTS": "lots"}, 'GEON_MAX_ELEMENTS is "lots"; expected a positive integer'),
        ({"GEON_MAX_BYTES": "0"}, 'GEON_MAX_BYTES is "0"; expected a positive integer'),
        (
            {"GEON_MAX_SECONDS": "-1"},
            'GEON_MAX_SECONDS is "-1"; expected a positive number of seconds',
        ),
    ],
    ids=["not-a-number", "zero", "negative"],
)
def test_bad_limit_settings_name_the_variable(env: dict[str, str], message: str) -> None:
    with pytest.raises(LimitError) as exc:
        Limits.from_env(env)
    assert str(exc.value) == message


def test_compile_refuses_with_env_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    # given GEON_MAX_ELEMENTS in the environment
    monkeypatch.setenv("GEON_MAX_ELEMENTS", "10")
    # when a plan is compiled with default limits / then the environment's limit applies
    with pytest.raises(LimitError) as exc:
        compile_graph(gc.graph([_graph()]))
    assert str(exc.value) == (
        'tensor "x" has 1000 elements; the limit is 10 elements per tensor (GEON_MAX_ELEMENTS)'
    )

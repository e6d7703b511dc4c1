"""The run order of operations (geon.core.order), one rule for the executor and the cost model."""

from __future__ import annotations

from geon.core.nodes import Node
from geon.core.order import run_order


def _op(name: str, reads: list[str], writes: list[str]) -> Node:
    def sel(ids: list[str]) -> dict[str, list[dict[str, str]]]:
        return {"x": [{"tensorId": t} for t in ids]}

    return Node(name, "Operation", None, {"inputs": sel(reads), "outputs": sel(writes)})


def test_waves_of_ready_operations_in_the_order_given() -> None:
    # given d reading what b and c write, b reading a's, listed d, c, b, a
    ops = [_op("d", ["u", "v"], ["w"]), _op("c", [], ["v"]), _op("b", ["t"], ["u"])]
    ops.append(_op("a", [], ["t"]))
    # then the first wave is c, a (the order given), then b, then d
    order, stuck = run_order(ops)
    assert ([o.id for o in order], stuck) == (["c", "a", "b", "d"], [])


def test_a_cycle_and_what_follows_it_are_left_waiting() -> None:
    # given a and b writing each other's input, c reading b's, e independent
    ops = [_op("a", ["u"], ["t"]), _op("b", ["t"], ["u"]), _op("c", ["u"], ["v"])]
    ops.append(_op("e", ["e_in"], ["e_out"]))
    order, stuck = run_order(ops)
    assert ([o.id for o in order], [o.id for o in stuck]) == (["e"], ["a", "b", "c"])


def test_an_operation_reading_its_own_output_does_not_wait_on_itself() -> None:
    order, stuck = run_order([_op("a", ["t"], ["t"])])
    assert ([o.id for o in order], stuck) == (["a"], [])

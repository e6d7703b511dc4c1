"""What the executor needs of an operation that the other constraints leave unchecked (issue 21:
"a graph without error issues must run"), so that a graph that checks clean is never refused by
:func:`geon.execute.compile_run`.

>>> import numpy as np
>>> from geon import core as gc
>>> from geon.core.graph import OPERATION, Graph
>>> g = gc.graph([gc.constant(np.ones(2), axes=[gc.Axis("H", 2)]) * 2.0])
>>> g.check()
[]
>>> palette = {"id": "00000000-0000-4000-8000-000000000001", "type": OPERATION,
...     "label": "add_1", "body": {"kernel": "op:add", "inputs": {}, "outputs": {}}}
>>> bare = Graph.from_json({"id": "00000000-0000-4000-8000-000000000000", "nodes": [palette]})
>>> [i.message for i in bare.check()][0]  # doctest: +NORMALIZE_WHITESPACE
'operation "add_1" (op:add) has no input "tensors"; connect a tensor to its "tensors" input or
 delete the operation'

- ``OperationPorts`` (Operations with a kernel of geon's namespace that
  ``OperationAxesInference`` does not judge — nothing connected, or only tensors without
  ``TensorAxes``): the input keys are the kernel's, each required key holds one tensor (an n-ary
  kernel at least two), and the operation writes exactly one tensor, in ``"result"``. An
  operation added from the palette with nothing connected is reported here. **Geon's namespace**
  is the kernel names that begin with ``op:`` (:data:`GEON_NAMESPACE`): those are geon's own,
  with geon's ports. Every other name is loom's — ``matmul`` and ``row_sum`` too, although the
  catalogue knows them so that the executor can run them — and is checked by loom's rules only
  (form, references, signatures, applications), never against geon's catalogue: loom's own
  unit-test documents write ``matmul``'s product as ``"z"``, not ``"result"``, and must check
  clean (``tests/core/loom_unit/matmul_*.json``).
- ``PositionalKernelAgreement`` (the same operations once their ports are right, when no tensor
  they touch has ``TensorAxes``): the kernel runs positionally, which only the elementwise kernels
  and ``op:linear``, ``matmul`` and ``row_sum`` do, and an elementwise kernel's operand
  selections broadcast (NumPy's rule, from the right) to the shape of the selection it writes, or
  to as many elements — for the operation and for each of its Applications that agrees with it
  (a disagreeing one is the application constraints' issue).

A named operation (one with a tensor tagged with ``TensorAxes``) is judged by
``OperationAxesInference`` alone, which reports the same port problems in its own words; the
checks here then stay silent, so that one problem is one issue. Kernels outside geon's namespace
(custom kernels, and loom's ``matmul`` and ``row_sum``) are loom's and check clean by these
rules; the executor refuses a custom kernel (it has no implementation) and a loom kernel whose
ports are not geon's (``matmul`` writing ``"z"``), naming them, and that is the one exception to
"no error issue, then it runs".
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from operator import sub

from geon.core.checks.applications import application_signature, operation_application
from geon.core.checks.axes import infer_operation
from geon.core.checks.cycles import dataflow
from geon.core.checks.fastpath import is_well_formed, per_version
from geon.core.checks.messages import context, issue, names
from geon.core.errors import quote
from geon.core.graph import APPLICATION, OPERATION, TENSOR, TENSOR_AXES, GraphIndex, Node
from geon.core.issues import Constraint, Issue
from geon.core.ops import CATALOGUE, Kernel
from geon.core.ops.positional import Shape, broadcast_shape
from geon.core.signatures import Signature, signature_of
from geon.core.zspace import IPF, parse_range

__all__ = ["CONSTRAINTS", "GEON_NAMESPACE", "PORTS", "POSITIONAL"]

PORTS = "OperationPorts"
POSITIONAL = "PositionalKernelAgreement"

GEON_NAMESPACE = "op:"
"""The prefix of geon's own kernel names: only these are held to geon's ports (``OperationPorts``);
every other kernel is loom's."""

ELEMENTWISE = ("nary", "binary", "unary")
"""The kernel families the executor runs on tensors without axes, besides ``positional``."""


def _judged_here(index: GraphIndex, node: Node) -> tuple[Kernel | None, bool]:
    """The catalogue kernel of a well-formed operation that ``OperationAxesInference`` leaves to
    these checks (nothing named connected), or None; and whether its ports are right. Both
    constraints ask, so it is judged once per index version (it reads the operation's tensors)."""
    return per_version(index, node, "runnable.kernel", _judge)


def _judge(index: GraphIndex, node: Node) -> tuple[Kernel | None, bool]:
    k = _kernel_judged_here(index, node)
    return k, k is not None and not any(True for _ in _port_issues(node, k))


def _kernel_judged_here(index: GraphIndex, node: Node) -> Kernel | None:
    kname = node.body.get("kernel")
    if not isinstance(kname, str) or kname not in CATALOGUE or not is_well_formed(index, node):
        return None
    if infer_operation(index, node) != (None, None):
        return None  # named: OperationAxesInference reports its ports and axes
    return CATALOGUE[kname]


def _keys(node: Node, side: str) -> dict[str, int]:
    """How many selections each key of one side holds, in document order."""
    out: dict[str, int] = {}
    raw = node.body.get(side)
    if isinstance(raw, dict):
        for key, items in raw.items():
            out[key] = len(items) if isinstance(items, list) else 0
    return out


def _ports(index: GraphIndex, node: Node) -> Iterator[Issue]:
    kname = node.body.get("kernel")
    if not isinstance(kname, str) or not kname.startswith(GEON_NAMESPACE):
        return  # loom's kernel (matmul's "z" included): loom's rules judge it, not geon's ports
    k, ports_ok = _judged_here(index, node)
    if k is not None and not ports_ok:
        yield from _port_issues(node, k)


def _port_issues(node: Node, k: Kernel) -> Iterator[Issue]:
    who = f"operation {quote(node.name)} ({k.name})"
    inputs, outputs = _keys(node, "inputs"), _keys(node, "outputs")

    def found(summary: str, message: str, where: str, **params: object) -> Issue:
        return issue(
            PORTS,
            "KernelError",
            summary,
            f"{who} {message}",
            (node.id,),
            (context("Operation", node.id, where, {"kernel": k.name}),),
            {"kernel": k.name, **params},
        )

    for key, n in inputs.items():
        if key not in k.inputs and n:
            yield found(
                "Operation has an input its kernel does not read",
                f"has an input {quote(key)}, which {k.name} does not read; expected inputs "
                f"{names(k.inputs)}; disconnect the tensors from {quote(key)}",
                f".body.inputs.{key}",
                key=key,
            )
    for key in k.inputs:
        n = inputs.get(key, 0)
        if n == 0 and key not in k.optional:
            yield found(
                "Operation input is not connected",
                f"has no input {quote(key)}; connect a tensor to its {quote(key)} input or delete "
                "the operation",
                ".body.inputs",
                key=key,
            )
        elif k.variadic and n == 1:
            yield found(
                "Operation needs another input",
                f"reads 1 tensor as {quote(key)}; expected at least two; connect another tensor "
                "to it or delete the operation",
                f".body.inputs.{key}",
                key=key,
                count=n,
            )
        elif not k.variadic and n > 1:
            yield found(
                "Operation input holds several tensors",
                f"reads {n} tensors as {quote(key)}; expected exactly one; disconnect all but one",
                f".body.inputs.{key}",
                key=key,
                count=n,
            )
    for key, n in outputs.items():
        if key != "result" and n:
            yield found(
                "Operation has an output its kernel does not write",
                f'has an output {quote(key)}; expected only "result"; disconnect the tensors '
                f"from {quote(key)}",
                f".body.outputs.{key}",
                key=key,
            )
    written = outputs.get("result", 0)
    if written == 0:
        yield found(
            "Operation writes no tensor",
            'writes no tensor; connect its "result" output to a tensor (the editor creates it '
            "once every input is connected) or delete the operation",
            ".body.outputs",
            key="result",
        )
    elif written > 1:
        yield found(
            "Operation writes several tensors",
            f'writes {written} tensors as "result"; expected exactly one; disconnect all but one',
            ".body.outputs.result",
            key="result",
            count=written,
        )


def _positional(index: GraphIndex, node: Node) -> Iterator[Issue]:
    k, ports_ok = _judged_here(index, node)
    if k is None or not ports_ok:
        return
    # the distinct tensors it selects, in document order (shared with the cycle check's memo)
    ins, outs = index.memo(node, "dataflow", dataflow)
    get = index.get
    tensors = [get(t) for t in dict.fromkeys(ins + outs)]
    if any(t is None or t.type != TENSOR or not is_well_formed(index, t) for t in tensors):
        return  # TensorOperationAgreement reports it
    who = f"operation {quote(node.name)} ({k.name})"
    if any(t is not None and t.tags and TENSOR_AXES in t.tags for t in tensors):
        return  # OperationAxesInference judges a mix of named and positional tensors
    if k.named and k.family not in ELEMENTWISE:
        labels = list(dict.fromkeys(t.label or t.id for t in tensors if t is not None))
        yield issue(
            POSITIONAL,
            "AxisError",
            "Kernel needs named axes",
            f"{who} reads and writes tensors without TensorAxes {names(labels)}; {k.name} works "
            "on named axes; give every tensor it reads and writes its axes",
            (node.id,),
            (context("Operation", node.id, ".body", {"kernel": k.name}),),
            {"kernel": k.name},
        )
        return
    if k.family not in ELEMENTWISE:
        return
    found_at: list[tuple[Node, str, str]] = []
    found = _elementwise_problem(node, k)
    if found is not None:
        found_at.append((node, "operation", found))
    # an application is judged only where it agrees with the operation; under a pointwise
    # signature every one that agrees broadcasts, whatever its range, so none need reading
    apps = () if _pointwise(signature_of(index, node)) else index.applications_of(node.id)
    for app in apps:
        # the shapes first (cheap); the application's agreement only where they clash
        if app.type != APPLICATION or not is_well_formed(index, app):
            continue
        found = _elementwise_problem(app, k)
        if found is not None and _agrees(index, app):
            what = f"application {quote(app.label or app.id)} of the operation"
            found_at.append((app, what, found))
    for owner, what, problem in found_at:
        yield issue(
            POSITIONAL,
            "ShapeError",
            "Operand shapes do not broadcast to the result",
            f"{who}: the {what} {problem}; select regions whose shapes agree or are 1 from "
            "the right, or give the tensors axes",
            (node.id, *(() if owner is node else (owner.id,))),
            (context("Selections", owner.id, ".body", None),),
            {"kernel": k.name},
        )


_COLUMNS: dict[int, tuple[IPF, list[int | None] | None]] = {}
""":func:`_columns` by IPF identity (equal IPFs are one object, ``ipf_from_json``), holding the
IPF so its id stays its own; bounded like ``ipf_of``'s cache and cleared with it."""


def _columns(ipf: IPF | str) -> list[int | None] | None:
    """The index column each row of ``ipf`` follows (coefficient 1, shape 1), None for a
    broadcast row (all zero, shape 1); None when a row is anything else."""
    if isinstance(ipf, str):
        return None
    hit = _COLUMNS.get(id(ipf))
    if hit is not None and hit[0] is ipf:
        return hit[1]
    if len(_COLUMNS) >= 4096:
        _COLUMNS.clear()
    found = _columns_uncached(ipf)
    _COLUMNS[id(ipf)] = (ipf, found)
    return found


def clear_columns() -> None:
    """Forget :func:`_columns`' results (``clear_caches`` calls it: a cold check starts cold)."""
    _COLUMNS.clear()


def _columns_uncached(ipf: IPF) -> list[int | None] | None:
    found: list[int | None] = []
    for row, size in zip(ipf.map.projection, ipf.shape, strict=True):
        used = [(c, v) for c, v in enumerate(row) if v]
        if size != 1 or len(used) > 1 or (used and used[0][1] != 1):
            return None
        found.append(used[0][0] if used else None)
    return found


def _pointwise(sig: Signature | None) -> bool:
    """Whether any application that agrees with an operation of signature ``sig`` broadcasts:
    one output, and, aligned from the right, each operand dim follows the same index column as
    the output's dim there or is a broadcast row. Its selections' extents are then, dim by dim,
    the application's extent in that column or 1, so they broadcast to exactly what it writes.

    >>> from geon.core.zspace import IPF
    >>> row, col = IPF([[1, 0], [0, 1]], [0, 0], [1, 1]), IPF([[0, 0], [0, 1]], [0, 0], [1, 1])
    >>> _pointwise({"inputs": {"tensors": (row, col)}, "outputs": {"result": (row,)}})
    True
    >>> whole = IPF([[0, 0], [0, 1]], [0, 0], [4, 1])  # reads all 4 rows at every point
    >>> _pointwise({"inputs": {"tensors": (row, whole)}, "outputs": {"result": (row,)}})
    False
    """
    if sig is None:
        return False
    written = [ipf for ipfs in sig.get("outputs", {}).values() for ipf in ipfs]
    out = _columns(written[0]) if len(written) == 1 else None
    if out is None:
        return False
    for ipfs in sig.get("inputs", {}).values():
        for ipf in ipfs:
            cols = _columns(ipf)
            if cols is None or len(cols) > len(out):
                return False
            aligned = zip(reversed(cols), reversed(out), strict=False)  # from the right
            if any(c is not None and c != o for c, o in aligned):
                return False
    return True


def _agrees(index: GraphIndex, app: Node) -> bool:
    """Whether a well-formed application agrees with its operation (a disagreement is reported
    once, by the application constraints)."""
    return not operation_application(index, app) and not application_signature(index, app)


def _shape(raw: object) -> Shape | None:
    """A selection range's shape: read straight off ``{start, end}`` lists of ints (the common,
    well-formed case, on every application of every operation), else through
    :func:`geon.core.zspace.parse_range`; None when malformed (another constraint's issue)."""
    if isinstance(raw, dict):
        start, end = raw.get("start"), raw.get("end")
        if type(start) is list and type(end) is list and len(start) == len(end):
            try:
                return tuple(map(sub, end, start))
            except TypeError:
                pass  # not numbers: parse_range says what is wrong
    r = parse_range(raw)
    return None if r is None else r.shape


def _side(owner: Node, side: str) -> dict[str, list[object]]:
    raw = owner.body.get(side) if isinstance(owner.body, dict) else None
    return raw if isinstance(raw, dict) else {}


def _elementwise_problem(owner: Node, k: Kernel) -> str | None:
    """What keeps an elementwise kernel from running positionally on ``owner``'s selections, or
    None: the executor's rule (:func:`geon.execute.kernels.lower_positional`)."""
    ins: list[Shape] = []
    inputs = _side(owner, "inputs")
    for key in k.inputs:
        items = inputs.get(key)
        for item in items if isinstance(items, list) else ():
            shape = _shape(item.get("range")) if isinstance(item, dict) else None
            if shape is None:
                return None  # malformed: another constraint's
            ins.append(shape)
    written = [
        item
        for items in _side(owner, "outputs").values()
        if isinstance(items, list)
        for item in items
    ]
    if len(written) != 1 or not isinstance(written[0], dict):
        return None
    out = _shape(written[0].get("range"))
    if out is None:
        return None
    shape = broadcast_shape(ins)
    if shape == out or (shape is not None and math.prod(shape) == math.prod(out)):
        return None
    shown = ", ".join(str(list(s)) for s in ins)
    if shape is None:
        return f"reads shapes ({shown}), which do not broadcast together"
    return f"reads shapes ({shown}), which broadcast to {list(shape)}, but writes {list(out)}"


CONSTRAINTS: tuple[Constraint, ...] = (
    Constraint(PORTS, frozenset({OPERATION}), _ports),
    Constraint(POSITIONAL, frozenset({OPERATION}), _positional),
)
"""The constraints of this module, registered after the axis constraints."""

"""The forward document as authoring handles, so that backward rules are written with the
builder's functions (every call inferred and checked as it is made).

:class:`Forward` reads a document: one handle per Tensor node (same id, label, dtype and axes)
and, per Operation node in dependency order, its kernel, params, operand handles and the
:class:`~geon.core.ops.Inference` re-derived from them. Handles made from the document are
leaves of the builder (no kernel): :func:`merge` later writes the nodes of new handles next to
the forward nodes, skipping the ones the document already has (same ids; axes by name).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from geon.core.axes import Axes, Axis
from geon.core.builder.document import document_nodes
from geon.core.builder.tensor import Tensor
from geon.core.constants import CONSTANT
from geon.core.errors import GeonError, quote
from geon.core.graph import (
    APPLICATION,
    AXIS,
    OPERATION,
    TENSOR,
    TENSOR_AXES,
    Graph,
    Node,
)
from geon.core.nodes import GROUP
from geon.core.ops import CATALOGUE, Inference, infer
from geon.core.order import run_order
from geon.core.variables import is_variable

MAX_OPERATIONS = 20_000
"""The most forward operations a training step is derived for (the step holds about five
times as many nodes); checked before any work."""
MAX_WINDOW_TAPS = 64
"""The largest conv2d window (height x width) differentiated, and pooling window that does not
tile its input: their gradients are a term per tap."""


class AutodiffError(GeonError):
    """A document or an option a training step cannot be derived from."""


@dataclass(frozen=True, slots=True)
class ForwardOp:
    """One Operation of the forward document, its operands as handles."""

    node: Node
    kernel: str
    params: dict[str, Any]
    inputs: tuple[tuple[str, tuple[Tensor, ...]], ...]
    output: Tensor
    inference: Inference

    @property
    def scope(self) -> str:
        """The op's ``Group`` scope, else its label or id (what backward scopes are named by)."""
        group = (self.node.tags or {}).get(GROUP)
        if isinstance(group, dict) and isinstance(group.get("scope"), str) and group["scope"]:
            return str(group["scope"]).strip("/") or self.node.id
        return self.output.name or self.node.label or self.node.id


class Forward:
    """The handles of a forward document (see the module docstring)."""

    def __init__(self, doc: Graph) -> None:
        self.doc = doc
        if doc.of_type(APPLICATION):
            raise AutodiffError(
                "the document holds Applications (a placed plan); derive the training step of "
                "the unplaced document, then place the step with a plan"
            )
        operations = doc.of_type(OPERATION)
        if len(operations) > MAX_OPERATIONS:
            raise AutodiffError(
                f"the document has {len(operations):,} operations; a training step is derived "
                f"for at most {MAX_OPERATIONS:,}"
            )
        self.axes: dict[str, Axis] = {}
        for node in doc.of_type(AXIS):
            axis = Axis.from_json(node.body)
            self.axes[axis.name] = axis
        self.tensors: dict[str, Tensor] = {}
        self.variables: list[Tensor] = []
        self.constants: set[str] = set()
        for node in doc.of_type(TENSOR):
            self.tensors[node.id] = self._handle(node)
        self.ops: list[ForwardOp] = []
        order, stuck = run_order(doc.of_type(OPERATION))
        if stuck:
            raise AutodiffError(
                f"operation {quote(stuck[0].label or stuck[0].id)} is in a cycle; a training step "
                "is derived for documents without cycles"
            )
        for node in order:
            self.ops.append(self._op(node))
        self.producer = {op.output.id: op for op in self.ops}
        for node in doc.of_type(TENSOR):
            if is_variable(node.tags) and node.id not in self.producer:
                self.variables.append(self.tensors[node.id])

    def _handle(self, node: Node) -> Tensor:
        tag = (node.tags or {}).get(TENSOR_AXES)
        if not isinstance(tag, dict):
            raise AutodiffError(
                f"tensor {quote(node.label or node.id)} has no TensorAxes tag; a training step is "
                "derived for documents with named axes"
            )
        rng = node.body.get("range") or {}
        if any(s != 0 for s in rng.get("start", [])):
            raise AutodiffError(
                f"tensor {quote(node.label or node.id)} starts at {rng.get('start')}; a training "
                "step is derived for tensors whose ranges start at 0"
            )
        axes = Axes.parse(tag["axes"], self.axes)
        scope = {a.name: a for a in axes.declared}
        t = Tensor(axes, str(node.body.get("dtype")), name=node.label, scope=scope)
        t.id = node.id
        if node.tags and node.tags.get(CONSTANT) is not None:
            self.constants.add(node.id)
        return t

    def _op(self, node: Node) -> ForwardOp:
        kernel = node.body.get("kernel")
        where = quote(node.label or node.id)
        if kernel not in CATALOGUE or not CATALOGUE[kernel].named:
            raise AutodiffError(
                f'operation {where} runs kernel "{kernel}", which has no backward rule; '
                "expected a named catalogue kernel"
            )
        inputs: list[tuple[str, tuple[Tensor, ...]]] = []
        for key, items in (node.body.get("inputs") or {}).items():
            inputs.append((key, tuple(self.tensors[s["tensorId"]] for s in items)))
        outs = (node.body.get("outputs") or {}).get("result") or []
        if len(outs) != 1:
            raise AutodiffError(f"operation {where} has no single result")
        output = self.tensors[outs[0]["tensorId"]]
        params = dict(node.body.get("params") or {})
        scope = dict(self.axes)
        inf = infer(kernel, {k: [t.axes for t in ts] for k, ts in inputs}, params, scope)
        if kernel in ("op:max_pool2d", "op:avg_pool2d"):
            ks, st = inf.params["kernel_size"], inf.params["stride"]
            tiles = list(ks) == list(st) and not any(inf.params.get("padding", [0, 0]))
            if not tiles and ks[0] * ks[1] > MAX_WINDOW_TAPS:
                raise AutodiffError(
                    f"{kernel} {where} has a window of {ks[0] * ks[1]} taps that do not tile the "
                    f"input; the backward pass takes at most {MAX_WINDOW_TAPS} (a term per tap)"
                )
        if kernel == "op:conv2d":
            taps = 1
            for r in dict(inputs)["filter"][0].axes:
                if {"Height", "Width"} & set(r.roles):
                    taps *= int(r.length or 1)
            if taps > MAX_WINDOW_TAPS:
                raise AutodiffError(
                    f"conv2d {where} has a window of {taps} taps; the backward pass takes at "
                    f"most {MAX_WINDOW_TAPS} (a dot per tap)"
                )
        return ForwardOp(node, kernel, dict(inf.params), tuple(inputs), output, inf)

    def by_label(self, label: str) -> Tensor:
        """The tensor labelled ``label`` (exactly one)."""
        found = [t for t in self.tensors.values() if t.name == label]
        if len(found) != 1:
            labels = sorted({t.name for t in self.tensors.values() if t.name})[:8]
            what = "no tensor" if not found else f"{len(found)} tensors"
            raise AutodiffError(
                f'{what} labelled "{label}"; expected exactly one (labels include {labels})'
            )
        return found[0]


def merge(doc: Graph, outputs: Sequence[Tensor], groups: dict[str, str]) -> Graph:
    """``doc`` with the nodes computing ``outputs`` added: nodes the document holds already
    (same id, or an Axis of the same name) are not repeated; an Operation whose result id is in
    ``groups`` gets that ``Group`` scope."""
    have_ids = {n.id for n in doc.nodes}
    have_axes = {str(n.body.get("name")) for n in doc.of_type(AXIS)}
    extra = document_nodes(list(outputs), known_tensors=have_ids, known_axes=have_axes)
    nodes = list(doc.nodes)
    for n in extra:
        if n.type == OPERATION:
            result = n.body["outputs"]["result"][0]["tensorId"]
            if result in groups:
                n = n.replace(tags={**(n.tags or {}), GROUP: {"scope": groups[result]}})
        nodes.append(n)
    return Graph(nodes, id=doc.id, extra=doc.extra, keys=doc.keys)

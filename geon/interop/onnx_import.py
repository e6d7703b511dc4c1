"""ONNX model -> geon document, by axis unification (issue #20; see geon/interop/README.md).

Every dim of every ONNX value is a node of a union-find; each operator proposes the unions it
forces (elementwise broadcasting aligns from the right, a matmul's contracted dims, a transpose's
permutation, a reduction's kept dims). A union that would give one value the same axis twice is
skipped (``cannot-link``: attention's ``seq x seq`` scores keep two axes), and where a skipped
union leaves an operand's axis different from what the op needs, a ``cast_axes`` relabels it.
A reshape whose dim groups share a factoring splits classes into atomic axes (:mod:`.onnx_atoms`,
the head-axis rule): attention's ``(S, B, E) -> (S, B*H, Dh) -> (B, H, S, Dh)`` keeps batch and
heads as two axes, so a plan can split heads. An atom is named after a ``dim_param`` (``batch``)
or ``d<length>``, or as ``names`` says (:mod:`.onnx_roles`: ``heads``, ``ffn``...).
Contractions are dual pairs: the weight of a MatMul/Gemm carries the contracted axis one level
up (``d16+1``), so ``dot`` infers exactly the ONNX output order. Weights are stored in their
atoms' shape; graph inputs and outputs keep ONNX's.

Initializers become input tensors labelled with their ONNX names and tagged ``Variable`` (the
model's trainable parameters, DESIGN.md §11), their values in :attr:`Imported.weights` (the CLI
writes them to an ``.npz``); scalars become inline constants. Every ONNX value's tensor is
labelled with the value name. Name scopes (``/layers.0/attn/...``) become a ``Group`` tag on
each operation (DESIGN.md §3 has no grouping node; unknown tags are kept as they are).

>>> import onnx
>>> from onnx import helper as h, TensorProto as T
>>> g = h.make_graph([h.make_node("Relu", ["x"], ["y"], name="/blk/relu")], "g",
...     [h.make_tensor_value_info("x", T.FLOAT, ["batch", 3])],
...     [h.make_tensor_value_info("y", T.FLOAT, ["batch", 3])])
>>> imp = import_onnx(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), dims={"batch": 2})
>>> [(n.label) for n in imp.graph.nodes if n.type.endswith("Axis")]
['batch', 'd3']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from geon.core.axes import AxisRef, CompositeRef, Ref
from geon.core.builder import Tensor, constant, graph, placeholder
from geon.core.builder import functions as F
from geon.core.errors import GeonError
from geon.core.graph import Graph
from geon.core.nodes import GROUP
from geon.interop.onnx_atoms import (
    Factors,
    UnionFind,
    conform_dims,
    flat,
    grouped,
    refine,
)
from geon.interop.onnx_common import (
    BINARY,
    DTYPES,
    FOLDABLE,
    LAYERED,
    MAX_NODES,
    NARY,
    OTHER,
    REDUCE,
    SUPPORTED,
    UNARY,
    WINDOWED,
    OnnxImportError,
    UnsupportedOperators,
)
from geon.interop.onnx_common import attrs as _attrs
from geon.interop.onnx_constants import constant_value, dtype_of
from geon.interop.onnx_gate import MAX_FOLDED, admit, fits, refuse_unsupported
from geon.interop.onnx_layers import is_lookup
from geon.interop.onnx_rewrite import gelu_patterns, reshape_groups
from geon.interop.onnx_roles import AxisProposal, declared, name_by_role, with_axes

GROUP_TAG = GROUP
"""The Group tag an imported operation's scope is written in (geon.core.nodes.GROUP)."""
"""The tag that keeps an operation's ONNX name scope: ``{"scope": "/layers.0/attn"}``."""

__all__ = [
    "BINARY", "DTYPES", "GROUP_TAG", "MAX_NODES", "NARY", "OTHER", "REDUCE", "SUPPORTED",
    "UNARY", "Imported", "OnnxImportError", "UnsupportedOperators", "import_onnx", "read_onnx",
    "review_onnx",
]  # fmt: skip


@dataclass
class Imported:
    """:func:`import_onnx`'s document, weights and input/output labels, axes' roles and names."""

    graph: Graph
    weights: dict[str, np.ndarray[Any, Any]] = field(default_factory=dict)
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    axes: list[AxisProposal] = field(default_factory=list)


def _scope(node: Any) -> str | None:
    name = node.name or ""
    if "/" not in name.strip("/"):
        return None
    return name.rsplit("/", 1)[0] or None


class _Importer:
    def __init__(
        self, model: Any, dims: Mapping[str, int], known: Mapping[str, Any] | None = None
    ) -> None:
        import onnx

        self.known = dict(known or {})
        self.inline: set[str] = set(self.known)
        self.onnx = onnx
        self.dims = dict(dims)
        self.model = model
        self.g = model.graph
        self.opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)
        self.shapes: dict[str, tuple[int, ...]] = {}
        self.params: dict[tuple[str, int], str] = {}
        self.dtype: dict[str, str] = {}
        self.elem: dict[str, int] = {}  # ONNX element type of each value recorded from a shape
        self._pending_at: tuple[int, list[Any]] = (0, [])  # fold's nodes looked at, pending
        self.consts: dict[str, np.ndarray[Any, Any]] = {}
        self.handles: dict[str, Tensor] = {}
        self.uf = UnionFind()
        self.factors = Factors()
        self.reshapes: list[tuple[str, str, list[int], list[int]]] = []  # multi-dim groups
        self.atoms_of: dict[tuple[str, int], list[int]] = {}
        self.refs: dict[str, list[Ref]] = {}  # one per ONNX dim (a composite when factored)
        self.parts: dict[str, list[list[AxisRef]]] = {}  # the atoms of each ONNX dim
        self.flats: dict[str, Tensor] = {}
        self.finished: set[int] = set()
        self.outputs = {vi.name for vi in self.g.output}
        self.scopes: dict[str, str] = {}
        self.nodes = list(self.g.node)
        self.arguments: set[str] = set()
        self.roles: dict[tuple[str, int], set[str]] = {}  # conv2d's roles (Height...) of dims

    # -- shapes -------------------------------------------------------------------------
    def _record(self, vi: Any, strict: bool = True) -> None:
        t = vi.type.tensor_type
        if not t.HasField("shape"):
            return
        dims: list[int] = []
        for i, d in enumerate(t.shape.dim):
            if d.HasField("dim_value"):
                dims.append(int(d.dim_value))
            elif d.HasField("dim_param") and d.dim_param in self.dims:
                dims.append(int(self.dims[d.dim_param]))
                self.params[(vi.name, i)] = d.dim_param
            elif not strict:
                return
            else:
                what = d.dim_param or "unnamed"
                raise OnnxImportError(
                    f'dim {i} of "{vi.name}" is {what!r} without a length; bind it, e.g. '
                    f"--dim {d.dim_param or 'batch'}=8"
                )
        self.shapes[vi.name] = tuple(dims)
        self.dtype[vi.name] = DTYPES.get(t.elem_type, "")
        self.elem[vi.name] = t.elem_type

    def infer_shapes(self) -> None:
        from onnx import numpy_helper

        for init in self.g.initializer:
            try:
                arr = numpy_helper.to_array(init)
            except MemoryError:  # a bound of the process, not a fault of the model
                raise
            except Exception as exc:  # dims that the data does not fill, a bad type...
                raise OnnxImportError(
                    f'initializer "{init.name}" cannot be read: {exc}; expected a tensor whose '
                    "data fills its dims"
                ) from None
            self.consts[init.name] = arr
            self.shapes[init.name] = tuple(arr.shape)
            self.dtype[init.name] = DTYPES.get(init.data_type, "")
        for n in self.g.node:
            if n.op_type == "Constant":
                arr = constant_value(n)
                self.inline.add(n.output[0])
                self.consts[n.output[0]] = arr
                self.shapes[n.output[0]] = tuple(arr.shape)
                self.dtype[n.output[0]] = dtype_of(arr)
        for name, value in self.known.items():
            arr = np.asarray(value)
            self.consts[name] = arr
            self.shapes[name] = tuple(arr.shape)
            self.dtype[name] = dtype_of(arr)
        # bind dim_params first, so inference propagates concrete lengths
        for vi in self.g.input:
            if vi.name not in self.consts and vi.name not in self.arguments:
                self._record(vi)
        self._infer(self.nodes)

    def _infer(self, nodes: list[Any]) -> None:
        """ONNX shape inference on ``nodes`` with the values they read from outside bound (graph
        inputs' dims, the shapes already known, small constants' values for shape arithmetic)
        and records the values whose shapes come out static. Only what ``nodes`` read is handed
        over, so inferring a few nodes costs a few nodes, not the whole graph (issue #34: the
        fold's re-inference per Shape node made importing quadratic)."""
        from onnx import helper, numpy_helper

        h = helper
        made = {o for n in nodes for o in n.output if o}
        nested = any(a.type in (a.GRAPH, a.GRAPHS) for n in nodes for a in n.attribute)
        read = (
            set(self.shapes) | set(self.consts)
            if nested  # a subgraph may read any outer value
            else {i for n in nodes for i in n.input if i and i not in made}
        )
        inputs = []
        inits = []
        for k in sorted(read):
            v = self.consts.get(k)
            if v is not None and (k in self.inline or v.size <= 64):
                inits.append(numpy_helper.from_array(np.asarray(v), k))
            elif v is not None:
                elem = helper.np_dtype_to_tensor_dtype(v.dtype)
                inputs.append(h.make_tensor_value_info(k, elem, v.shape))
            elif k in self.shapes and k in self.elem:
                inputs.append(h.make_tensor_value_info(k, self.elem[k], self.shapes[k]))
        outputs = [vi for vi in self.g.output if vi.name in made]
        graph = h.make_graph(nodes, "g", inputs, outputs, initializer=inits)
        model = h.make_model(graph, opset_imports=list(self.model.opset_import))
        model.ir_version = self.model.ir_version
        try:
            inferred = self.onnx.shape_inference.infer_shapes(model, data_prop=True)
        except MemoryError:  # a bound of the process, not a fault of the model
            raise
        except Exception as exc:  # onnx raises its own InferenceError family
            raise OnnxImportError(f"ONNX shape inference failed: {exc}") from None
        for vi in [*inferred.graph.value_info, *inferred.graph.output]:
            if vi.name not in self.shapes:
                self._record(vi, strict=False)

    def _pending(self, nodes: list[Any]) -> list[Any]:
        """The nodes some of whose outputs have no shape yet (what a re-inference may find):
        those still pending at the last call, then the nodes ``nodes`` gained since (``nodes``
        only grows between calls, so each node is looked at about once)."""
        seen, before = self._pending_at
        found = [
            n for n in (*before, *nodes[seen:]) if any(o and o not in self.shapes for o in n.output)
        ]
        self._pending_at = (len(nodes), found)
        return found

    def fold(self) -> None:
        """Compute the nodes whose inputs are all known (shape arithmetic: Shape, Gather,
        Concat, Unsqueeze... of constants) with ONNX's reference evaluator; they leave the
        graph, their outputs become inline constants."""
        from onnx.reference import ReferenceEvaluator

        keep = []
        for n in self.nodes:
            ins = [i for i in n.input if i]
            if n.op_type == "Constant":
                keep.append(n)
                continue
            if n.op_type == "Shape" and ins and ins[0] not in self.shapes:
                self._infer(self._pending(keep))
            if n.op_type == "Shape" and ins and ins[0] in self.shapes:
                a = _attrs(n)
                shape = self.shapes[ins[0]][a.get("start", 0) : a.get("end")]
                outs: Any = [np.asarray(shape, dtype=np.int64)]
            elif (
                n.op_type in FOLDABLE
                and ins
                and all(i in self.inline and self.consts[i].size <= 4096 for i in ins)
                and fits(n, {i: self.consts[i] for i in ins}, self.opset)
            ):
                try:
                    outs = ReferenceEvaluator(n).run(None, {i: self.consts[i] for i in ins})
                except MemoryError:  # a bound of the process, not a fault of the model
                    raise
                except Exception as exc:
                    raise OnnxImportError(
                        f'{n.op_type} "{n.name}" on constants could not be computed: {exc}'
                    ) from None
            else:
                keep.append(n)
                continue
            made = sum(int(np.asarray(v).size) for v in outs)
            if made > MAX_FOLDED:  # shape inference said otherwise: never keep more
                raise OnnxImportError(
                    f'{n.op_type} "{n.name}" on constants made {made:,} elements; geon computes '
                    f"at most {MAX_FOLDED:,} when importing"
                )
            for o, v in zip(n.output, outs, strict=False):
                arr = np.asarray(v)
                self.consts[o], self.shapes[o], self.dtype[o] = arr, arr.shape, dtype_of(arr)
                self.inline.add(o)
        self.nodes = keep
        self._infer(self._pending(keep))
        for vi in self.g.output:
            if vi.name not in self.shapes:
                self._record(vi)
        self.arguments = {
            n.input[1] for n in self.nodes
            if n.op_type in (*REDUCE, "Reshape", "Squeeze", "Unsqueeze", "Gather")
            and len(n.input) > 1 and n.input[1] and not is_lookup(self, n)
        }  # fmt: skip

    def check_shapes(self) -> None:
        """Every value has a static shape and a known element type; the union-find gets them."""
        for n in self.nodes:
            for o in n.output:
                if o and o not in self.shapes:
                    raise OnnxImportError(
                        f'the shape of "{o}" (output of {n.op_type} "{n.name}") is unknown '
                        "after ONNX shape inference; geon needs static shapes"
                    )
        for name, dt in self.dtype.items():
            if not dt and name not in self.arguments and name in self._used_names():
                raise OnnxImportError(f'value "{name}" has an element type geon does not know')
        used = self._used_names()
        for name, shape in self.shapes.items():
            if name in self.arguments or name not in used:
                continue
            if 0 in shape:
                raise OnnxImportError(
                    f'value "{name}" has shape {shape}, with a dim of length 0; geon axes have '
                    "length >= 1 (empty tensors are not imported)"
                )
            self.uf.add(name, len(shape))

    # -- unification --------------------------------------------------------------------
    def _bcast(self, ins: Sequence[str], out: str) -> None:
        so = self.shapes[out]
        for v in ins:
            s = self.shapes[v]
            for j in range(len(s)):
                i = len(so) - len(s) + j
                if s[j] == so[i]:
                    self.uf.union((v, j), (out, i))

    def unify(self) -> None:
        uf = self.uf
        for n in self.nodes:
            op, ins = n.op_type, [i for i in n.input if i]
            if not n.output or (not ins and op != "Constant"):
                continue
            out = n.output[0]
            a = _attrs(n)
            if op in UNARY or op in ("Gelu", "Identity", "Softmax"):
                self._bcast(ins[:1], out)
            elif op in BINARY or op in NARY:
                self._bcast(ins, out)
            elif op == "LayerNormalization":
                self._bcast(ins, out)
                axis = a.get("axis", -1) % len(self.shapes[ins[0]])
                for extra in n.output[1:]:
                    for i in range(axis):
                        if extra:
                            uf.union((ins[0], i), (extra, i))
            elif op == "Transpose":
                perm = a.get("perm", list(reversed(range(len(self.shapes[ins[0]])))))
                for i, p in enumerate(perm):
                    uf.union((out, i), (ins[0], p))
            elif op == "MatMul":
                sa, sb, so = (self.shapes[v] for v in (ins[0], ins[1], out))
                uf.union((ins[0], len(sa) - 1), (ins[1], max(len(sb) - 2, 0)))
                if len(sb) >= 2:
                    uf.union((ins[1], len(sb) - 1), (out, len(so) - 1))
                if len(sa) >= 2:
                    uf.union((ins[0], len(sa) - 2), (out, len(so) - (2 if len(sb) >= 2 else 1)))
                for v, s in ((ins[0], sa), (ins[1], sb)):
                    for j in range(len(s) - 2):
                        i = len(so) - len(s) + j
                        if s[j] == so[i]:
                            uf.union((v, j), (out, i))
            elif op == "Gemm":
                ta, tb = a.get("transA", 0), a.get("transB", 0)
                uf.union((ins[0], 0 if ta else 1), (ins[1], 1 if tb else 0))
                uf.union((ins[0], 1 if ta else 0), (out, 0))
                uf.union((ins[1], 0 if tb else 1), (out, 1))
                if len(ins) > 2:
                    self._bcast(ins[2:3], out)
            elif op == "Einsum":
                from geon.interop.onnx_rewrite import einsum_terms

                terms, result = einsum_terms(n, [len(self.shapes[i]) for i in ins])
                seen: dict[str, tuple[str, int]] = {}
                for v, letters in [*zip(ins, terms, strict=True), (out, result)]:
                    for i, c in enumerate(letters):
                        if c in seen:
                            uf.union(seen[c], (v, i))
                        else:
                            seen[c] = (v, i)
            elif op in WINDOWED:
                from geon.interop.onnx_ops import unify_window

                unify_window(self, n, a)
            elif op in ("Reshape", "Flatten"):
                for gi, go in reshape_groups(self.shapes[ins[0]], self.shapes[out]):
                    if len(gi) == 1 and len(go) == 1:
                        uf.union((ins[0], gi[0]), (out, go[0]))
                    else:
                        self.reshapes.append((ins[0], out, gi, go))
            elif op in ("Squeeze", "Unsqueeze") or (op == "Gather" and not is_lookup(self, n)):
                kept = self.kept_dims(n)
                for i, j in kept.items():
                    uf.union((ins[0], i), (out, j))
            elif op in LAYERED or op == "Gather":
                from geon.interop.onnx_layers import unify_layer

                unify_layer(self, n, a)
            elif op in REDUCE:
                axes, keep = self._reduce_axes(n, a)
                j = 0
                for i in range(len(self.shapes[ins[0]])):
                    if i in axes:
                        j += 1 if keep else 0
                        continue
                    uf.union((ins[0], i), (out, j))
                    j += 1

    def axes_argument(self, n: Any, what: str) -> list[int]:
        """The constant ``axes`` (or ``indices``) of ``n``: its second input or attribute."""
        if len(n.input) > 1 and n.input[1]:
            if n.input[1] not in self.consts:
                raise OnnxImportError(
                    f'{n.op_type} "{n.name}" takes its {what} from "{n.input[1]}", which is not '
                    "a constant; geon needs them when importing"
                )
            return [int(v) for v in self.consts[n.input[1]].reshape(-1)]
        return [int(v) for v in _attrs(n).get("axes", [])]

    def kept_dims(self, n: Any) -> dict[int, int]:
        """Squeeze/Unsqueeze/Gather (scalar index): input dim -> output dim for the dims kept."""
        rank_in, rank_out = len(self.shapes[n.input[0]]), len(self.shapes[n.output[0]])
        if n.op_type == "Gather":
            idx = self.consts.get(n.input[1])
            if idx is None or idx.ndim != 0:
                raise OnnxImportError(
                    f'Gather "{n.name}" with indices "{n.input[1]}" of shape '
                    f"{None if idx is None else idx.shape}; geon imports a Gather by one "
                    "constant scalar index (embedding lookups need a gather kernel)"
                )
            axis = _attrs(n).get("axis", 0) % rank_in
            dropped = {axis}
        elif n.op_type == "Squeeze":
            axes = self.axes_argument(n, "axes")
            shape = self.shapes[n.input[0]]
            dropped = {x % rank_in for x in axes} if axes else {
                i for i, d in enumerate(shape) if d == 1}  # fmt: skip
        else:
            added = {x % rank_out for x in self.axes_argument(n, "axes")}
            outs = [j for j in range(rank_out) if j not in added]
            return dict(zip(range(rank_in), outs, strict=True))
        ins = [i for i in range(rank_in) if i not in dropped]
        return dict(zip(ins, range(rank_out), strict=True))

    def _used_names(self) -> set[str]:
        used = {i for n in self.nodes for i in n.input} | {o for n in self.nodes for o in n.output}
        return used | {vi.name for vi in self.g.output}

    def _reduce_axes(self, n: Any, a: Mapping[str, Any]) -> tuple[set[int], bool]:
        rank = len(self.shapes[n.input[0]])
        keep = bool(a.get("keepdims", 1))
        if len(n.input) > 1 and n.input[1]:
            if n.input[1] not in self.consts:
                raise OnnxImportError(
                    f'{n.op_type} "{n.name}" takes its axes from "{n.input[1]}", which is not '
                    "a constant; geon needs the reduced axes when importing"
                )
            axes = [int(x) for x in self.consts[n.input[1]].reshape(-1)]
        else:
            axes = list(a.get("axes", []))
        if not axes:
            if a.get("noop_with_empty_axes", 0):
                return set(), keep
            axes = list(range(rank))
        return {x % rank for x in axes}, keep

    # -- building -----------------------------------------------------------------------
    def leaf(self, name: str, level: Mapping[int, int] | None = None) -> Tensor:
        """A graph input (in its ONNX shape, unflattened where factored) or a constant or
        weight (in its atoms' shape), in atoms; ``level`` raises dims' dual levels."""
        lv = level or {}
        if name in self.consts:
            refs = [a + lv.get(i, 0) for i, d in enumerate(self.parts[name]) for a in d]
            arr = self.consts[name].reshape([int(r.length or 1) for r in refs])
            if arr.size <= 1 or name in self.inline:
                return constant(arr, axes=refs, name=name)
            return placeholder(refs, name=name, dtype=self.dtype[name])
        t = placeholder(self.refs[name], name=name, dtype=self.dtype[name])
        self.flats[name] = t
        return conform_dims(t, [1] * len(self.refs[name]), self.parts[name])

    def atoms(self, name: str) -> Tensor:
        """The tensor of ONNX value ``name`` with the atoms of its dims as axes."""
        t = self.handles.get(name)
        if t is None:
            raise OnnxImportError(f'value "{name}" is used before it is computed')
        return t

    def get(self, name: str) -> Tensor:
        """The tensor of ONNX value ``name``, one axis per ONNX dim (:attr:`refs`): a factored
        dim's atoms flattened into a composite axis."""
        t = self.atoms(name)
        dims = self.parts.get(name, [])
        if all(len(d) == 1 for d in dims):
            return t
        if name not in self.flats:
            for p, d in enumerate(dims):  # each factored dim before p is one axis by now
                if len(d) > 1:
                    t = F.flatten(t, t.axes[p : p + len(d)])
            self.flats[name] = t
        return self.flats[name]

    def conform(self, t: Tensor, refs: Sequence[Ref], what: str) -> Tensor:
        """``t`` relabelled (``cast_axes``) so its axes are ``refs`` position by position."""
        if [str(r) for r in t.axes] == [str(r) for r in refs]:
            return t
        return F.cast_axes(t, refs)

    def aligned(self, name: str, out: str) -> Tensor:
        """Operand ``name`` of a broadcasting op with output ``out``, one axis per ONNX dim:
        size-1 broadcast dims dropped, the others relabelled to the output's axes."""
        t = self.get(name)
        s, so, ro = self.shapes[name], self.shapes[out], self.refs[out]
        drops: dict[Any, Any] = {}
        keep: list[Ref] = []
        for j in range(len(s)):
            i = len(so) - len(s) + j
            if s[j] != so[i]:
                drops[t.axes[j]] = 0
            else:
                keep.append(ro[i])
        if drops:
            t = F.slice(t, drops)
        return self.conform(t, keep, name)

    def aligned_atoms(self, name: str, out: str) -> Tensor:
        """:meth:`aligned` in atoms: the operand's atoms relabelled to the output's."""
        t = self.atoms(name)
        s, so, dims = self.shapes[name], self.shapes[out], self.parts[name]
        g = grouped(t, [len(d) for d in dims])
        drops: dict[Any, Any] = {}
        have: list[int] = []
        want: list[list[AxisRef]] = []
        for j in range(len(s)):
            i = len(so) - len(s) + j
            if s[j] != so[i]:
                drops[g[j][0]] = 0
            else:
                have.append(len(g[j]))
                want.append(self.parts[out][i])
        if drops:
            t = F.slice(t, drops)
        return conform_dims(t, have, want)

    def finish(self, out: str, t: Tensor, node: Any) -> None:
        """Record ``t`` as ONNX value ``out``: in atoms (unflattened if it has one axis per
        ONNX dim), labelled ``out`` (a factored graph output: its flattened form is)."""
        want = flat(self.parts[out])
        composite = [r for r in self.refs[out] if isinstance(r, CompositeRef)]
        if composite and {str(r) for r in t.axes} == {str(r) for r in self.refs[out]}:
            if [str(r) for r in t.axes] != [str(r) for r in self.refs[out]]:
                t = F.dimshuffle(t, self.refs[out])
            t = F.unflatten(t, composite)
        if [str(r) for r in t.axes] != [str(r) for r in want]:
            if {str(r) for r in t.axes} == {str(r) for r in want}:
                t = F.dimshuffle(t, want)
            else:
                raise OnnxImportError(
                    f'{node.op_type} "{node.name}" gives axes {[str(r) for r in t.axes]}, '
                    f"expected {[str(r) for r in want]} for {out}"
                )
        if (t.name is not None and t.name != out) or id(t) in self.finished:  # an alias
            t = F.cast_axes(t, want)
        if not (composite and out in self.outputs):
            t.name = out
        if t.dtype != self.dtype[out]:
            raise OnnxImportError(
                f'{node.op_type} "{node.name}" gives {t.dtype} for "{out}"; ONNX says '
                f"{self.dtype[out]} (geon does not convert element types)"
            )
        self.handles[out] = t
        self.finished.add(id(t))
        if (scope := _scope(node)) is not None:
            self.scopes[out] = scope

    def build(self) -> Imported:
        consumers: dict[str, list[Any]] = {}
        for n in self.nodes:
            for i in n.input:
                consumers.setdefault(i, []).append(n)
        weights: dict[str, np.ndarray[Any, Any]] = {}
        inputs: list[str] = []
        for vi in self.g.input:
            if vi.name not in self.consts and vi.name not in self.arguments:
                self.handles[vi.name] = self.leaf(vi.name)
                inputs.append(vi.name)
        for name, arr in self.consts.items():
            if name in self.arguments or name not in self.refs:
                continue
            lv: dict[int, int] = {}
            users = consumers.get(name, [])
            if len(users) == 1 and users[0].op_type in ("MatMul", "Gemm", "Conv"):
                u = users[0]
                conv = u.op_type == "Conv"
                if len(u.input) > 1 and u.input[1] == name and len(arr.shape) == 2 and not conv:
                    tb = _attrs(u).get("transB", 0) if u.op_type == "Gemm" else 0
                    lv = {1 if tb else 0: 1}
                elif conv and u.input[1] == name and len(arr.shape) == 4:
                    lv = {1: 1}  # the filter's input channels: the channel's dual
            self.handles[name] = self.leaf(name, lv)
            if self.handles[name].value is None:  # a weight: a trainable variable (§11)
                self.handles[name].variable = {}
                weights[name] = arr.reshape([int(r.length or 1) for r in self.handles[name].axes])
        for n in self.nodes:
            if n.op_type == "Constant":
                continue
            self.node(n)
        outs = [vi.name for vi in self.g.output]
        for o in outs:
            self.get(o).name = o
        doc = graph([self.get(o) for o in outs])
        by_id = {node.id: node for node in doc.nodes}
        for name, t in self.handles.items():
            scope = self.scopes.get(name)
            if scope and t.op_id and t.op_id in by_id:
                by_id[t.op_id].tags[GROUP_TAG] = {"scope": scope}
        labels = {node.label for node in doc.nodes}
        return Imported(doc, {k: v for k, v in weights.items() if k in labels}, inputs, outs)

    def node(self, n: Any) -> None:
        from geon.interop.onnx_ops import emit

        emit(self, n, _attrs(n))


def import_onnx(
    model: Any,
    dims: Mapping[str, int] | None = None,
    known: Mapping[str, Any] | None = None,
    max_bytes: int | None = None,
    bound: str = "",
    names: Mapping[str, str] | None = None,
) -> Imported:
    """Import an ONNX model (a ``ModelProto`` or a path) as a geon document.

    ``dims`` binds ``dim_param`` names to lengths (``{"batch": 8}``); ``known`` gives values of
    graph inputs needed when importing (a reduction's ``axes`` input), made constants. ``names``
    (``{"d4": "h"}`` over the proposed ones; ``{}``: all proposed) names axes (:mod:`.onnx_roles`).
    ``max_bytes`` refuses, before any work, a model whose document would surely have more JSON
    (:func:`estimate_document`; ``bound`` names where the limit comes from). Nothing the model
    names is opened (external data is refused), control flow is refused by name, and only
    :data:`FOLDABLE` operators are computed on constants, each within :data:`MAX_FOLDED`
    elements. Raises :class:`UnsupportedOperators` listing the operators geon lacks with their
    node names, and :class:`OnnxImportError` for anything else it refuses.
    """
    imp = read_onnx(model, dims, known, max_bytes, bound)
    name_by_role(imp, names)
    try:
        return with_axes(imp, imp.build())
    except OnnxImportError:
        raise
    except GeonError as exc:
        raise OnnxImportError(f"geon refused a mapped operator: {exc}") from None


def review_onnx(model: Any, dims: Mapping[str, int] | None = None, max_bytes: int | None = None,
                bound: str = "") -> list[AxisProposal]:  # fmt: skip
    """The axes :func:`import_onnx` would declare, each with its role and proposed name, read
    without building the document or its weights (an import's review, issue 35): the same
    checks and bounds up to naming the axes (:func:`geon.interop.onnx_roles.declared`)."""
    imp = read_onnx(model, dims, None, max_bytes, bound)
    name_by_role(imp, None)
    return declared(imp)


def read_onnx(model: Any, dims: Mapping[str, int] | None = None,
              known: Mapping[str, Any] | None = None, max_bytes: int | None = None,
              bound: str = "") -> _Importer:  # fmt: skip
    """:func:`import_onnx` up to naming the axes: the model admitted, its shapes inferred and
    folded, refused where geon lacks an operator, its dims unified into atoms."""
    import onnx

    if isinstance(model, (str, bytes)) or hasattr(model, "__fspath__"):
        try:
            model = onnx.load(model, load_external_data=False)
        except Exception as exc:
            raise OnnxImportError(f'cannot read "{model}" as an ONNX model: {exc}') from None
    imp = _Importer(model, dims or {}, known)
    imp.nodes = admit(imp.model, imp.known, max_bytes, bound or "the bound asked for")
    imp.infer_shapes()
    imp.fold()
    gelu_patterns(imp)
    refuse_unsupported(imp.nodes)
    imp.check_shapes()
    imp.unify()
    refine(imp)
    return imp

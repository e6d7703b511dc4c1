"""What each imported axis is in the model, read off its structure (issue 35: imported models
read like their source), and the names a person accepts for them.

After unification and naming (:func:`geon.interop.onnx_atoms.name_axes`) every atom is one
axis, named after a ``dim_param`` (``batch``) or ``d<length>`` (``d4``). :func:`propose` reads
the ONNX graph for where the model shows what an axis is:

- **hidden**: what ``LayerNormalization`` normalises (the axes from its ``axis`` on);
- **sequence**, **head_size**, **heads**: a ``Softmax`` over the result of a batched ``MatMul``
  (attention's scores ``q·kᵀ``): the scores' last two axes are the sequence (the keys' and the
  queries'; they are two axes, :mod:`geon.interop.onnx_atoms`), the contracted axis is the head
  size, and a leading axis that a reshape keeps in one dim with the head size (``E`` split into
  ``H x Dh``) is the heads;
- **ffn**: what a weight's ``MatMul``/``Gemm`` widens into before an activation (``Relu``,
  ``Gelu``, ``Sigmoid``, ``Tanh``), the feed-forward width;
- **batch**: a ``dim_param`` named like one (``batch``, ``N``, ``batch_size``...), else an axis
  of a graph input that no operation contracts, normalises or reduces and that has no other role.

A ``dim_param`` name is always kept (it is the model's own name); a ``dim_param`` named like a
sequence (``seq``, ``sequence``, ``tokens``...) has that role. The proposed name of an axis with
a role is the role (``heads``), made unique with ``_2``, ``_3``... (the sequence axis seen only
as the rows of attention's scores, the queries', is ``sequence_q``); one without a role keeps
its name. Names
follow DESIGN.md §2 (``^[A-Za-z_][A-Za-z0-9_]*$``): lower case, words joined by ``_``, as the
CLI's mesh axes and the examples' ``batch`` axis are.

:func:`rename` then gives the atoms the accepted names before the document is built, so every
tensor, weight and composite carries them (:func:`geon.interop.onnx_import.import_onnx`'s
``names``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from geon.core.axes import Axis, AxisRef, CompositeRef
from geon.core.errors import GeonError
from geon.interop.onnx_atoms import name_axes
from geon.interop.onnx_common import OnnxImportError, attrs

__all__ = ["ROLES", "AxisProposal", "NamesError", "check_names", "declared", "name_by_role",
           "propose", "rename", "with_axes"]  # fmt: skip

ROLES = ("batch", "sequence", "heads", "head_size", "hidden", "ffn")
"""The roles the importer infers, in the order a reader meets them (also the proposed names)."""

ACTIVATIONS = ("Relu", "Gelu", "Sigmoid", "Tanh", "Erf")
_BATCH_PARAM = re.compile(r"(?i)^(batch(_?size)?|bs|n|b)$")
_SEQUENCE_PARAM = re.compile(r"(?i)^(seq(uence)?(_?len(gth)?)?|tokens?|time|t|s|src_len|tgt_len)$")


class NamesError(OnnxImportError):
    """Names for an import's axes that are not valid axis names, not axes, or not unique."""


@dataclass(frozen=True, slots=True)
class AxisProposal:
    """One axis of an import: its ``name`` as imported (``d4``), ``length``, inferred ``role``
    (one of :data:`ROLES`, or ``""``), the ``proposed`` name and where the role was ``seen``."""

    name: str
    length: int
    role: str
    proposed: str
    seen: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "length": self.length, "role": self.role,
                "proposed": self.proposed, "seen": self.seen}  # fmt: skip


def _atoms(imp: Any, value: str, dim: int) -> list[str]:
    """The axis names of the atoms of ``value``'s dim ``dim`` (negative counts from the end)."""
    parts = imp.parts.get(value)
    if not parts or not -len(parts) <= dim < len(parts):
        return []
    return [ref.axis.name for ref in parts[dim]]


class _Reader:
    """The evidence of each role, first one kept per axis: ``found[axis] = (role, seen)``."""

    def __init__(self, imp: Any) -> None:
        self.imp = imp
        self.found: dict[str, tuple[str, str]] = {}
        self.together: dict[str, set[str]] | None = None
        self.producer = {o: n for n in imp.nodes for o in n.output if o}
        self.consumers: dict[str, list[Any]] = {}
        for n in imp.nodes:
            for i in n.input:
                self.consumers.setdefault(i, []).append(n)

    def mark(self, names: list[str], role: str, seen: str) -> None:
        for name in names:
            self.found.setdefault(name, (role, seen))

    def dim_params(self) -> None:
        for (value, i), param in sorted(self.imp.params.items(), key=lambda kv: kv[0][1]):
            atoms = _atoms(self.imp, value, i)
            role = "batch" if _BATCH_PARAM.match(param) else ""
            role = "sequence" if _SEQUENCE_PARAM.match(param) else role
            if atoms == [param] or len(atoms) == 1:
                self.mark(atoms, role, f'dim_param "{param}" of input "{value}"')

    def layer_norms(self) -> None:
        for n in self.imp.nodes:
            if n.op_type != "LayerNormalization":
                continue
            rank = len(self.imp.shapes.get(n.input[0], ()))
            axis = int(attrs(n).get("axis", -1)) % max(rank, 1)
            for d in range(axis, rank):
                atoms = _atoms(self.imp, n.input[0], d)
                if len(atoms) == 1:
                    self.mark(atoms, "hidden", f'normalised by LayerNormalization "{n.name}"')

    def attention(self) -> None:
        for n in self.imp.nodes:
            if n.op_type != "Softmax" or n.input[0] not in self.producer:
                continue
            mm = self.producer[n.input[0]]
            a = mm.input[0] if mm.op_type == "MatMul" else ""
            if not a or len(self.imp.shapes.get(a, ())) < 3:
                continue
            scores = n.input[0]
            where = f'attention scores of MatMul "{mm.name}"'
            keys, rows = _atoms(self.imp, scores, -1), _atoms(self.imp, scores, -2)
            size = _atoms(self.imp, a, -1)
            self.mark(size, "head_size", f"contracted by the {where}")
            self.mark(keys, "sequence", f'normalised by Softmax "{n.name}" over the {where}')
            self.mark(rows, "sequence", f"rows of the {where}")
            for d in range(len(self.imp.shapes[scores]) - 2):
                for atom in _atoms(self.imp, scores, d):
                    if self._beside(atom, size):
                        self.mark([atom], "heads", f"split from hidden with the head size: {where}")

    def _beside(self, atom: str, size: list[str]) -> bool:
        """Whether some dim of some value is ``atom`` and the head size together (``H x Dh``)."""
        if self.together is None:  # once: the atoms each atom shares a dim with
            self.together = {}
            for dims in self.imp.parts.values():
                for d in dims:
                    for ref in d if len(d) > 1 else ():
                        self.together.setdefault(ref.axis.name, set()).update(
                            r.axis.name for r in d
                        )
        return bool(self.together.get(atom, set()) & set(size))

    def widenings(self) -> None:
        for n in self.imp.nodes:
            if n.op_type not in ("MatMul", "Gemm") or len(n.input) < 2:
                continue
            if n.input[1] not in self.imp.consts:
                continue
            out, act = n.output[0], None
            for _ in range(2):  # the matmul, maybe its bias Add, then the activation
                nxt = self.consumers.get(out, [])
                if len(nxt) != 1:
                    break
                if nxt[0].op_type in ACTIVATIONS:
                    act = nxt[0]
                    break
                if nxt[0].op_type != "Add":
                    break
                out = nxt[0].output[0]
            if act is not None:
                atoms = _atoms(self.imp, n.output[0], -1)
                self.mark(atoms, "ffn", f'widened by {n.op_type} "{n.name}" before '
                          f'{act.op_type} "{act.name}"')  # fmt: skip

    def batch(self) -> None:
        """Axes of graph inputs no operation contracts, normalises or reduces."""
        used: set[str] = set()
        for n in self.imp.nodes:
            if n.op_type in ("MatMul", "Gemm") and n.input[0] in self.imp.parts:
                trans = n.op_type == "Gemm" and int(attrs(n).get("transA", 0))
                used.update(_atoms(self.imp, n.input[0], 0 if trans else -1))
            elif n.op_type.startswith("Reduce") or n.op_type in ("Conv", "Softmax"):
                for d in range(len(self.imp.shapes.get(n.input[0], ()))):
                    if n.op_type != "Conv" or d != 0:
                        used.update(_atoms(self.imp, n.input[0], d))
        roles = self.imp.roles
        for vi in self.imp.g.input:
            if vi.name in self.imp.consts or vi.name not in self.imp.parts:
                continue
            for i in range(len(self.imp.parts[vi.name])):
                atoms = _atoms(self.imp, vi.name, i)
                if len(atoms) != 1 or atoms[0] in used or roles.get((vi.name, i)):
                    continue
                if self.imp.shapes[vi.name][i] > 1 and len(self.imp.parts[vi.name]) > 1:
                    self.mark(atoms, "batch", f'dim {i} of input "{vi.name}", never contracted')


def propose(imp: Any) -> list[AxisProposal]:
    """Every axis of ``imp`` (named, :func:`~geon.interop.onnx_atoms.name_axes`) with its role
    and proposed name, in the order the axes were named (graph inputs' first)."""
    axes: dict[str, Axis] = {}
    for dims in imp.parts.values():
        for d in dims:
            for ref in d:
                axes.setdefault(ref.axis.name, ref.axis)
    reader = _Reader(imp)
    reader.dim_params()
    reader.layer_norms()
    reader.attention()
    reader.widenings()
    reader.batch()
    params = set(imp.params.values())
    inputs = {r.axis.name for vi in imp.g.input for d in imp.parts.get(vi.name, []) for r in d}
    taken = {name for name in axes if name in params or name not in reader.found}
    out: list[AxisProposal] = []
    for name in sorted(axes, key=lambda k: (k not in inputs, k)):
        role, seen = reader.found.get(name, ("", ""))
        proposed = name
        if role and name not in params:
            base = role
            if role == "sequence" and seen.startswith("rows"):  # queries beside the keys
                base = "sequence_q"
            proposed, k = base, 1
            while proposed in taken:
                k += 1
                proposed = f"{base}_{k}"
            taken.add(proposed)
        out.append(AxisProposal(name, int(axes[name].length or 1), role, proposed, seen))
    order = {p.name: i for i, p in enumerate(out)}
    return sorted(out, key=lambda p: (ROLES.index(p.role) if p.role else len(ROLES), order[p.name]))


def check_names(proposals: list[AxisProposal], names: Mapping[str, Any]) -> dict[str, str]:
    """The name of every axis: ``names`` (``{name as imported: accepted name}``) over the
    proposed ones. A :class:`NamesError` names the first key that is not an axis, the first
    value that is not an axis name (DESIGN.md §2, :class:`geon.core.axes.Axis`' own check), or
    the first name given to two axes."""
    known = {p.name: p for p in proposals}
    for key, value in names.items():
        if key not in known:
            wide = [k for k, p in known.items() if p.length > 1]  # length-1 ones go unlisted
            listed = ", ".join(f'"{k}"' for k in wide[:12])
            raise NamesError(f'axis "{str(key)[:80]}" is not an axis of this model; expected one '
                             f"of {listed}{', ...' if len(wide) > 12 else ''}")  # fmt: skip
        if not isinstance(value, str):
            raise NamesError(f'the name for axis "{key}" is {value!r}; expected text')
        try:
            Axis(value, known[key].length)
        except GeonError as error:
            raise NamesError(f'the name for axis "{key}": {error}') from None
    final = {p.name: str(names.get(p.name, p.proposed)) for p in proposals}
    owner: dict[str, str] = {}
    for key, value in final.items():
        if value in owner:
            raise NamesError(
                f'name "{value}" is given to axes "{owner[value]}" and "{key}"; expected one '
                "name per axis"
            )
        owner[value] = key
    return final


def rename(imp: Any, final: Mapping[str, str]) -> None:
    """Give ``imp``'s atoms the names ``final`` (``{name as imported: name}``), in place, before
    the document is built; roles, lengths and dual levels are kept."""
    made: dict[str, Axis] = {}

    def ref(r: AxisRef) -> AxisRef:
        a = r.axis
        new = final.get(a.name, a.name)
        if new == a.name:
            return r
        if a.name not in made:
            made[a.name] = Axis(new, a.length, a.roles, a.cls, a.batch, a.doc)
        return AxisRef(made[a.name], r.level)

    for v, dims in imp.parts.items():
        parts = [[ref(r) for r in d] for d in dims]
        imp.parts[v] = parts
        imp.refs[v] = [d[0] if len(d) == 1 else CompositeRef.of(d) for d in parts]


def name_by_role(imp: Any, names: Mapping[str, Any] | None) -> None:
    """Name ``imp``'s atoms (:func:`~geon.interop.onnx_atoms.name_axes`), read their roles
    (:func:`propose`, kept as ``imp.proposals``) and, when ``names`` is given, rename them
    (``{}``: as proposed; ``imp.final`` is what each is called then)."""
    name_axes(imp)
    imp.proposals = propose(imp)
    imp.final = {p.name: p.name for p in imp.proposals}
    if names is not None:
        imp.final = check_names(imp.proposals, names)
        rename(imp, imp.final)


def with_axes(imp: Any, imported: Any) -> Any:
    """``imported`` with the proposals of the axes its document declares (a length-1 atom of
    a folded value is not one), under the names they were given."""
    from dataclasses import replace

    labels = {n.label for n in imported.graph.nodes if n.type.endswith("/Axis")}
    kept = [p for p in imp.proposals if imp.final[p.name] in labels]
    return replace(imported, axes=kept)


def declared(imp: Any) -> list[AxisProposal]:
    """The proposals (:func:`name_by_role`, not renamed) of the axes the document would declare,
    without building it: those of a value an output is computed from (a folded value, or a
    node's shape, axes, indices or split sizes, is no tensor of the document: its length-1
    atoms are not axes). What :func:`with_axes` keeps of a built one (tests/interop: every
    committed model and ONNX node case)."""
    producer = {o: n for n in imp.nodes for o in n.output if o}
    live: set[str] = set()
    todo = [vi.name for vi in imp.g.output]
    while todo:
        value = todo.pop()
        if value in live:
            continue
        live.add(value)
        n = producer.get(value)
        if n is None or n.op_type == "Constant":
            continue
        sizes = n.input[1] if n.op_type == "Split" and len(n.input) > 1 else ""
        todo.extend(i for i in n.input if i and i not in imp.arguments and i != sizes)
    names = {r.axis.name for v in live for d in imp.parts.get(v, []) for r in d}
    return [p for p in imp.proposals if p.name in names]

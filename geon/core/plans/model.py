"""The shape of a shard plan (DESIGN.md §4, §9; issue 16): :func:`read_plan` checks the REST
``ShardPlan`` JSON and returns a :class:`Plan`, an immutable value.

>>> plan = read_plan({"name": "dp", "mesh": {"name": "m", "axes": {"dp": 2}},
...     "axisMapping": {"N": "dp"}, "inputs": {"x": {"over": {"N": "dp"}}}})
>>> plan.axis_mapping, plan.inputs[0][1].kind
((('N', 'dp'),), 'sharded')
>>> read_plan({"name": "dp", "mesh": {"axes": {"dp": 2}}, "axisMapping": {"N": "tp"}})
Traceback (most recent call last):
geon.core.plans.model.PlanError: axis mapping "N" -> "tp" names mesh axis "tp", which mesh "" \
does not have; expected one of ("dp")

The shape, every field but ``name`` and ``mesh`` optional::

    {"name", "mesh": {"name", "axes": {meshAxis: size}},
     "axisMapping": {axisName: meshAxis},
     "inputs": {tensorLabelOrId: "replicated" | {"over": {axisName: meshAxis}}
                                | {"device": [coords...]}},
     "spec": {operationId: {"over": {indexAxis: meshAxis}} | {"dim", "parts"|"chunk"|"sizes"}
                           | {"grid": {dim: parts}}}}

Everything is bounded before any work (:mod:`geon.core.limits`): a mesh of at most
``MAX_MESH_AXES`` axes and ``MAX_MESH_DEVICES`` devices, integers within int64, sizes lists of at
most ``MAX_PIECES``. Whether the plan fits a document (its operations, axes and tensors exist) is
decided when it is written (:mod:`geon.core.plans.write`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from geon.core.axes import AXIS_NAME
from geon.core.errors import DocumentError, quote
from geon.core.limits import (
    MAX_AXIS_NAME_LENGTH,
    MAX_MESH_AXES,
    MAX_MESH_DEVICES,
    MAX_PIECES,
    in_int64,
    show_int,
    show_text,
)
from geon.core.plans.pipeline import Pipeline, PipelineError, read_pipeline

__all__ = ["SPEC_KEYS", "InputLayout", "Plan", "PlanError", "ShardSpec", "read_plan"]

SPEC_KEYS = ("dim", "parts", "chunk", "sizes", "grid", "over")
"""The keys of one operation's ``spec`` entry (the ``shard`` edit op's, less ``mesh``)."""

_NAME_LENGTH = 100


class PlanError(DocumentError):
    """A shard plan is malformed, or does not fit the document it is written into."""


@dataclass(frozen=True, slots=True)
class ShardSpec:
    """One operation's entry of a plan's ``spec``: the arguments of its ``shard`` op."""

    dim: int | str | None = None
    parts: int | None = None
    chunk: int | None = None
    sizes: tuple[int, ...] | None = None
    grid: tuple[tuple[str, int], ...] | None = None
    over: tuple[tuple[str, str], ...] | None = None

    def to_json(self) -> dict[str, Any]:
        """The entry as JSON (only the keys it has)."""
        out: dict[str, Any] = {}
        for key in SPEC_KEYS:
            value = getattr(self, key)
            if value is None:
                continue
            out[key] = dict(value) if key in ("grid", "over") else value
            if key == "sizes":
                out[key] = list(value)
        return out


@dataclass(frozen=True, slots=True)
class InputLayout:
    """Where a graph input lives: on every device (``replicated``, the default), partitioned
    over mesh axes (``over``: tensor axis -> mesh axis), or on one ``device`` (its coordinates)
    and broadcast from there."""

    over: tuple[tuple[str, str], ...] = ()
    device: tuple[int, ...] | None = None

    @property
    def kind(self) -> str:
        """``"replicated"``, ``"sharded"`` or ``"device"``."""
        if self.device is not None:
            return "device"
        return "sharded" if self.over else "replicated"

    def to_json(self) -> Any:
        if self.device is not None:
            return {"device": list(self.device)}
        return {"over": dict(self.over)} if self.over else "replicated"


@dataclass(frozen=True, slots=True)
class Plan:
    """A checked shard plan (see the module docstring for its JSON)."""

    name: str
    mesh_name: str
    mesh_axes: tuple[tuple[str, int], ...]
    axis_mapping: tuple[tuple[str, str], ...] = ()
    inputs: tuple[tuple[str, InputLayout], ...] = ()
    spec: tuple[tuple[str, ShardSpec], ...] = ()
    pipeline: Pipeline | None = None
    """Pipeline stages (issue 33, :mod:`geon.core.plans.pipeline`): the plan is written on the
    mesh less the pipeline's axis (:meth:`stage_plan`), one stage's devices."""

    def to_json(self) -> dict[str, Any]:
        out = {
            "name": self.name,
            "mesh": {"name": self.mesh_name, "axes": dict(self.mesh_axes)},
            "axisMapping": dict(self.axis_mapping),
            "inputs": {key: layout.to_json() for key, layout in self.inputs},
            "spec": {op_id: entry.to_json() for op_id, entry in self.spec},
        }
        if self.pipeline is not None:
            out["pipeline"] = self.pipeline.to_json()
        return out

    def stage_plan(self) -> Plan:
        """The plan one pipeline stage runs: the mesh without the pipeline's axis, no pipeline
        (itself when it has none; a mesh of only that axis keeps it at size 1)."""
        if self.pipeline is None:
            return self
        axes = tuple((a, n) for a, n in self.mesh_axes if a != self.pipeline.axis)
        return replace(self, mesh_axes=axes or ((self.pipeline.axis, 1),), pipeline=None)


def read_plan(data: Any) -> Plan:
    """The :class:`Plan` of REST ``ShardPlan`` JSON; :class:`PlanError` naming the field, the
    bad value and what would be valid."""
    if not isinstance(data, Mapping):
        raise PlanError(
            f'plan {quote(data)} is not valid; expected {{"name", "mesh", "axisMapping"?, '
            '"inputs"?, "spec"?}'
        )
    fields = ("name", "mesh", "axisMapping", "inputs", "spec", "pipeline")
    unknown = [k for k in data if k not in fields]
    if unknown:
        raise PlanError(
            f'plan has field {quote(unknown[0])}; expected only "name", "mesh", "axisMapping", '
            '"inputs", "spec" and "pipeline"'
        )
    name = read_name(data.get("name"))
    mesh_name, mesh_axes = read_mesh(data.get("mesh"))
    mapping = read_axis_mapping(data.get("axisMapping", {}), mesh_name, mesh_axes)
    pipeline = None
    if data.get("pipeline") is not None:
        try:
            pipeline = read_pipeline(data["pipeline"], mesh_axes)
        except PipelineError as error:
            raise PlanError(str(error)) from None
    plan = Plan(
        name=name,
        mesh_name=mesh_name,
        mesh_axes=mesh_axes,
        axis_mapping=mapping,
        inputs=read_inputs(data.get("inputs", {}), mesh_name, mesh_axes),
        spec=read_spec(data.get("spec", {})),
        pipeline=pipeline,
    )
    if pipeline is not None:
        _pipeline_axis_unused(plan, pipeline.axis)
    return plan


def _pipeline_axis_unused(plan: Plan, axis: str) -> None:
    """The pipeline's mesh axis carries stages only: no mapping, input or spec names it."""
    named = [f"axis mapping {quote(a)}" for a, m in plan.axis_mapping if m == axis]
    named += [
        f"input {quote(k)}" for k, layout in plan.inputs if any(m == axis for _, m in layout.over)
    ]
    named += [
        f"spec entry {quote(k)}" for k, e in plan.spec if any(m == axis for _, m in e.over or ())
    ]
    if named:
        raise PlanError(
            f"{named[0]} names mesh axis {quote(axis)}, which carries the pipeline's stages; "
            "expected another mesh axis (stages run data and tensor parallelism on the others)"
        )


def read_name(name: Any) -> str:
    """A plan's name, stripped: non-empty, at most 100 characters."""
    if not isinstance(name, str) or not name.strip() or len(name.strip()) > _NAME_LENGTH:
        shown = show_text(name) if isinstance(name, str) else quote(name)[1:-1]
        raise PlanError(
            f'plan name "{shown}" is not valid; expected a non-empty string of at most '
            f"{_NAME_LENGTH} characters"
        )
    return name.strip()


def read_mesh(mesh: Any) -> tuple[str, tuple[tuple[str, int], ...]]:
    """A mesh ``{"name"?, "axes": {axis: size}}``: its name and axes, with at most
    ``MAX_MESH_AXES`` axes and ``MAX_MESH_DEVICES`` devices."""
    axes = mesh.get("axes") if isinstance(mesh, Mapping) else None
    name = mesh.get("name", "") if isinstance(mesh, Mapping) else None
    if not isinstance(axes, Mapping) or not axes or not isinstance(name, str):
        raise PlanError(
            f'mesh "{show_text(str(mesh))}" is not valid; expected {{"name": "...", "axes": '
            '{"x": 2}} with at least one axis'
        )
    if len(axes) > MAX_MESH_AXES:
        raise PlanError(
            f"mesh {quote(name)} has {len(axes)} axes; expected at most {MAX_MESH_AXES}"
        )
    devices = 1
    for axis, size in axes.items():
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise PlanError(f'mesh axis {quote(axis)} has size "{size}"; expected an integer >= 1')
        devices *= min(size, MAX_MESH_DEVICES + 1)
        if devices > MAX_MESH_DEVICES:
            raise PlanError(
                f"mesh {quote(name)} has more than {MAX_MESH_DEVICES} devices (axis {quote(axis)} "
                f"of size {show_int(size)}); expected at most {MAX_MESH_DEVICES} in all"
            )
    return name, tuple(axes.items())


def _axis_name(name: Any, where: str) -> str:
    if not isinstance(name, str) or len(name) > MAX_AXIS_NAME_LENGTH or not AXIS_NAME.match(name):
        raise PlanError(
            f"{where} names axis {quote(name)}; expected an axis name like "
            '"N" or "batch_1" (letters, digits, _; not starting with a digit)'
        )
    return name


def _mesh_axis(
    axis: Any, where: str, mesh_name: str, mesh_axes: tuple[tuple[str, int], ...]
) -> str:
    known = [a for a, _ in mesh_axes]
    if axis not in known:
        raise PlanError(
            f"{where} names mesh axis {quote(axis)}, which mesh {quote(mesh_name)} does not have; "
            "expected one of (" + ", ".join(quote(a) for a in known) + ")"
        )
    return str(axis)


def read_axis_mapping(
    mapping: Any, mesh_name: str, mesh_axes: tuple[tuple[str, int], ...]
) -> tuple[tuple[str, str], ...]:
    """``axisMapping`` ``{axisName: meshAxis}``, each mesh axis one of the mesh's."""
    if not isinstance(mapping, Mapping):
        raise PlanError(
            f"axisMapping {quote(mapping)} is not valid; expected {{axisName: meshAxis}} such as "
            '{"N": "dp"}'
        )
    out = []
    for axis, mesh_axis in mapping.items():
        where = f"axis mapping {quote(axis)} -> {quote(mesh_axis)}"
        out.append((_axis_name(axis, where), _mesh_axis(mesh_axis, where, mesh_name, mesh_axes)))
    return tuple(out)


def read_over(
    over: Any, where: str, mesh_name: str, mesh_axes: tuple[tuple[str, int], ...]
) -> tuple[tuple[str, str], ...]:
    """An input's ``over`` ``{axisName: meshAxis}``: at most one axis per mesh axis."""
    if not isinstance(over, Mapping) or not over:
        raise PlanError(
            f'{where} has over {quote(over)}; expected {{axisName: meshAxis}} such as {{"N": "dp"}}'
        )
    out: dict[str, str] = {}
    for axis, mesh_axis in over.items():
        name = _axis_name(axis, where)
        taken = [a for a, m in out.items() if m == mesh_axis]
        out[name] = _mesh_axis(mesh_axis, where, mesh_name, mesh_axes)
        if taken:
            raise PlanError(
                f"{where} puts axes {quote(taken[0])} and {quote(name)} both over mesh axis "
                f"{quote(mesh_axis)}; expected at most one axis per mesh axis"
            )
    return tuple(out.items())


def read_layout(
    value: Any, where: str, mesh_name: str, mesh_axes: tuple[tuple[str, int], ...]
) -> InputLayout:
    """One input's place: ``"replicated"``, ``{"over": {...}}`` or ``{"device": [coords]}``."""
    if value == "replicated":
        return InputLayout()
    if isinstance(value, Mapping) and list(value) == ["over"]:
        return InputLayout(over=read_over(value["over"], where, mesh_name, mesh_axes))
    if isinstance(value, Mapping) and list(value) == ["device"]:
        coords = value["device"]
        sizes = [s for _, s in mesh_axes]
        if (
            not isinstance(coords, list)
            or len(coords) != len(sizes)
            or not all(
                isinstance(c, int) and not isinstance(c, bool) and 0 <= c < s
                for c, s in zip(coords, sizes, strict=True)
            )
        ):
            shape = " x ".join(f"{a}={s}" for a, s in mesh_axes)
            raise PlanError(
                f"{where} has device {quote(coords)}; expected {len(sizes)} coordinates inside "
                f"mesh {quote(mesh_name)} ({shape}), such as {[0] * len(sizes)}"
            )
        return InputLayout(device=tuple(coords))
    raise PlanError(
        f'{where} is {quote(value)}; expected "replicated", {{"over": {{axisName: meshAxis}}}} '
        'or {"device": [coordinates]}'
    )


def read_inputs(
    inputs: Any, mesh_name: str, mesh_axes: tuple[tuple[str, int], ...]
) -> tuple[tuple[str, InputLayout], ...]:
    """``inputs`` ``{tensorLabelOrId: place}`` (see :func:`read_layout`)."""
    if not isinstance(inputs, Mapping):
        raise PlanError(
            f'inputs {quote(inputs)} is not valid; expected {{tensorLabelOrId: "replicated" | '
            '{"over": {...}} | {"device": [...]}}'
        )
    return tuple(
        (str(key), read_layout(value, f"input {quote(key)}", mesh_name, mesh_axes))
        for key, value in inputs.items()
    )


def read_spec(spec: Any) -> tuple[tuple[str, ShardSpec], ...]:
    """``spec`` ``{operationId: {...}}`` with known keys and values of the right types (whether
    they fit the operation is the ``shard`` op's business, when the plan is written)."""
    if not isinstance(spec, Mapping):
        raise PlanError(
            f'spec "{show_text(str(spec))}" is not valid; expected {{operationId: {{...}}}}'
        )
    out = []
    for op_id, entry in spec.items():
        bad = [k for k in entry if k not in SPEC_KEYS] if isinstance(entry, Mapping) else None
        if bad is None or bad:
            expected = ", ".join(f'"{k}"' for k in SPEC_KEYS)
            raise PlanError(
                f'spec of operation "{show_text(str(op_id))}" is not valid; expected an object '
                f"with some of {expected}"
            )
        out.append((str(op_id), _shard_spec(entry, f"spec of operation {quote(op_id)}")))
    return tuple(out)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and in_int64(value)


def _shard_spec(entry: Mapping[str, Any], where: str) -> ShardSpec:
    dim = entry.get("dim")
    if dim is not None and not (_is_int(dim) or isinstance(dim, str)):
        raise PlanError(f"{where} has dim {quote(dim)}; expected an index dim number or axis name")
    for key in ("parts", "chunk"):
        if entry.get(key) is not None and not _is_int(entry[key]):
            raise PlanError(f"{where} has {key} {quote(entry[key])}; expected an integer")
    sizes = entry.get("sizes")
    if sizes is not None and (
        not isinstance(sizes, list) or len(sizes) > MAX_PIECES or not all(map(_is_int, sizes))
    ):
        raise PlanError(
            f"{where} has sizes {quote(sizes)}; expected a list of at most {MAX_PIECES} integers"
        )
    return ShardSpec(
        dim=dim,
        parts=entry.get("parts"),
        chunk=entry.get("chunk"),
        sizes=tuple(sizes) if sizes is not None else None,
        grid=_pairs(entry.get("grid"), where, "grid", "{dim: parts}", _is_int),
        over=_pairs(entry.get("over"), where, "over", "{indexAxis: meshAxis}", _is_text),
    )


def _is_text(value: Any) -> bool:
    return isinstance(value, str)


def _pairs(
    value: Any, where: str, key: str, shape: str, ok: Any
) -> tuple[tuple[str, Any], ...] | None:
    if value is None:
        return None
    if (
        not isinstance(value, Mapping)
        or len(value) > MAX_MESH_AXES
        or not all(isinstance(k, str) and ok(v) for k, v in value.items())
    ):
        raise PlanError(
            f"{where} has {key} {quote(value)}; expected {shape} with at most {MAX_MESH_AXES} "
            "entries"
        )
    return tuple(value.items())


_PAIR = re.compile(r"^([A-Za-z_][A-Za-z0-9_]{0,31})=([0-9]{1,4})$")


def parse_mesh(text: str) -> dict[str, int]:
    """A mesh as people type it (``geon plan --search``, plan suggestions), ``dp=2,tp=4`` ->
    ``{"dp": 2, "tp": 4}``: at most 4 axes and 4096 devices; ``ValueError`` saying what is valid.

    >>> parse_mesh("dp=2, tp=4")
    {'dp': 2, 'tp': 4}
    """
    out: dict[str, int] = {}
    for part in text.split(","):
        found = _PAIR.match(part.strip())
        if found is None or int(found.group(2)) < 1 or found.group(1) in out:
            raise ValueError(
                f'mesh "{text[:80]}" is not valid at "{part.strip()[:40]}"; expected axis=size '
                "pairs separated by commas, like dp=2,tp=4 (each axis once, sizes >= 1)"
            )
        out[found.group(1)] = int(found.group(2))
    devices = 1
    for size in out.values():
        devices *= size
    if len(out) > 4 or devices > 4096:
        raise ValueError(
            f'mesh "{text[:80]}" has {len(out)} axes and {devices} devices; expected at most 4 '
            "axes and 4096 devices"
        )
    return out

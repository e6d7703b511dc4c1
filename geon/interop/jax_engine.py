"""The JAX engine (DESIGN.md §10, issue 31): a placed document's program
(:func:`geon.interop.jax_export.to_jax`) executed in this process, and the collectives of the
program XLA compiled, read from its text.

>>> text = ('%all-reduce = f32[8,4]{1,0} all-reduce(f32[8,4]{1,0} %p), channel_id=1, '
...         'replica_groups={{0,1,2,3},{4,5,6,7}}, to_apply=%add')
>>> [(c.kind, c.bytes_per_device, c.devices, c.groups) for c in compiled_collectives(text)]
[('all-reduce', 128, 4, 2)]

jax is optional (``pip install 'jax[cpu]'``, which ``make setup`` installs): :func:`require_jax`
says how to install it when it is missing. On one CPU host the mesh needs as many XLA host
devices, which can only be asked for before jax is first imported
(:func:`force_host_devices`); a process that loaded jax with too few devices is told so.
"""

from __future__ import annotations

import importlib.util
import math
import os
import re
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from geon.core.errors import GeonError
from geon.core.graph import Graph
from geon.interop.jax_export import to_jax

__all__ = [
    "INSTALL",
    "CompiledCollective",
    "JaxRun",
    "compiled_collectives",
    "force_host_devices",
    "jax_available",
    "require_jax",
    "run_jax",
]

INSTALL = "pip install 'jax[cpu]>=0.4.35' (make setup installs it)"
"""How to get the engine, as the refusals say it."""

_FLAG = "--xla_force_host_platform_device_count"

_KINDS = {
    "all-reduce": "all-reduce",
    "all-gather": "all-gather",
    "reduce-scatter": "reduce-scatter",
    "all-to-all": "all-to-all",
    "collective-permute": "permute",
}
_BYTES = {"pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2, "s32": 4,
          "u32": 4, "f32": 4, "s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16}  # fmt: skip
_INSTRUCTION = re.compile(
    r"^\s*(?:ROOT\s+)?%?(?P<name>[\w.\-]+)\s*=\s*(?P<shape>\(.*?\)|[a-z0-9]+\[[0-9,]*\](?:\{[^}]*\})?)"
    r"\s+(?P<op>all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute)"
    r"(?P<start>-start)?\((?P<rest>.*)$"
)
_ARRAY = re.compile(r"([a-z0-9]+)\[([0-9,]*)\]")


def jax_available() -> bool:
    """Whether jax can be imported here (without importing it)."""
    return "jax" in sys.modules or importlib.util.find_spec("jax") is not None


def require_jax() -> None:
    """:class:`GeonError` saying how to install jax when it is missing."""
    if not jax_available():
        raise GeonError(f"the JAX engine needs jax, which is not installed: {INSTALL}")


def force_host_devices(n: int) -> None:
    """Ask XLA for ``n`` CPU host devices, before jax is imported; :class:`GeonError` when jax
    is already loaded with fewer devices than ``n`` (then only a fresh process can have them)."""
    if "jax" not in sys.modules:
        flags = os.environ.get("XLA_FLAGS", "")
        if _FLAG not in flags:
            os.environ["XLA_FLAGS"] = f"{flags} {_FLAG}={max(n, 1)}".strip()
        return
    import jax

    have = len(jax.devices())
    if have < n:
        raise GeonError(
            f"the plan's mesh needs {n} devices; this process loaded jax with {have} "
            f"({jax.default_backend()}): start it with XLA_FLAGS={_FLAG}={n}"
        )


@dataclass(frozen=True, slots=True)
class CompiledCollective:
    """One collective of a compiled program: its kind (geon's names: ``permute`` for XLA's
    ``collective-permute``), one device's result buffer in bytes, the devices in one group and
    the number of groups, and ``combined``: how many tensors XLA combined into it (a tuple)."""

    kind: str
    bytes_per_device: int
    devices: int
    groups: int
    combined: int
    name: str

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "bytesPerDevice": self.bytes_per_device,
            "devices": self.devices,
            "groups": self.groups,
            "combined": self.combined,
            "name": self.name,
        }


def _shapes(text: str) -> list[int]:
    """The bytes of each array in an HLO shape (a tuple has several)."""
    out = []
    for dtype, dims in _ARRAY.findall(text):
        size = math.prod(int(d) for d in dims.split(",") if d) if dims else 1
        out.append(size * _BYTES.get(dtype, 4))
    return out


def _groups(rest: str, total: int) -> tuple[int, int]:
    """(devices per group, groups) of a collective's ``replica_groups``: explicit lists
    ``{{0,1},{2,3}}``, the iota form ``[2,2]<=[4]`` or the mesh form ``mesh[...] {'a'}``."""
    m = re.search(r"replica_groups=\{(\{[0-9,]*\}(?:,\{[0-9,]*\})*)\}", rest)
    if m:
        groups = re.findall(r"\{([0-9,]*)\}", m.group(1))
        sizes = [len([x for x in g.split(",") if x]) for g in groups]
        return (max(sizes) if sizes else total), len(groups)
    m = re.search(r"replica_groups=\[([0-9,]+)\]<=", rest)
    if m:
        dims = [int(d) for d in m.group(1).split(",")]
        return dims[-1], math.prod(dims[:-1]) if len(dims) > 1 else 1
    m = re.search(r"replica_groups=mesh\[([^\]]*)\][^{]*\{([^}]*)\}", rest)
    if m:
        mesh = {a: int(s) for a, s in re.findall(r"'([^']+)'=([0-9]+)", m.group(1))}
        inside = re.findall(r"'([^']+)'", m.group(2))
        n = math.prod(mesh[a] for a in inside if a in mesh)
        everyone = math.prod(mesh.values())
        return n, everyone // max(n, 1)
    return total, 1


def compiled_collectives(text: str, devices: int = 1) -> list[CompiledCollective]:
    """Every collective of a compiled program's text (``compiled.as_text()``), in order;
    ``devices``: the program's devices (a collective with no groups runs over all of them)."""
    out = []
    for line in text.splitlines():
        m = _INSTRUCTION.match(line)
        if m is None:
            continue
        shapes = _shapes(m.group("shape"))
        if m.group("start") and m.group("op") == "all-gather" and len(shapes) > 1:
            shapes = shapes[len(shapes) // 2 :]
        rest = m.group("rest")
        if m.group("op") == "collective-permute":
            pairs = re.search(r"source_target_pairs=\{(.*?)\}\}", rest)
            n = len(re.findall(r"\{", pairs.group(1))) if pairs else 1
            size, groups = 2, max(n, 1)
        else:
            size, groups = _groups(rest, devices)
        out.append(
            CompiledCollective(
                _KINDS[m.group("op")], sum(shapes), size, groups, len(shapes), m.group("name")
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class JaxRun:
    """A run on JAX: outputs by key (labels, ids where not unique), the compiled program's text,
    the mesh's devices, and the seconds spent compiling and running (apart)."""

    outputs: dict[str, np.ndarray[Any, Any]]
    text: str
    devices: int
    compile_seconds: float
    run_seconds: float

    def collectives(self) -> list[CompiledCollective]:
        return compiled_collectives(self.text, self.devices)


def load_program(graph: Graph) -> dict[str, Any]:
    """The namespace of ``graph``'s JAX program (:func:`~geon.interop.jax_export.to_jax`)
    executed as a module that is not ``__main__``; host devices forced first."""
    require_jax()
    text = to_jax(graph)
    namespace: dict[str, Any] = {"__name__": "geon_jax_program"}
    devices = int(re.search(r"^DEVICES = ([0-9]+)$", text, re.M).group(1))  # type: ignore[union-attr]
    force_host_devices(devices)
    exec(compile(text, "<geon jax program>", "exec"), namespace)  # our own text (jax_export)
    return namespace


def compile_only(graph: Graph) -> JaxRun:
    """Compile ``graph``'s program (no run): its text and compile time."""
    ns = load_program(graph)
    began = time.perf_counter()
    compiled = ns["compile_program"](ns["make_mesh"]())
    took = time.perf_counter() - began
    return JaxRun({}, compiled.as_text(), ns["DEVICES"], took, 0.0)


def run_jax(graph: Graph, arrays: dict[str, Any]) -> JaxRun:
    """Run ``graph`` under its plan on JAX with host ``arrays`` by key; :class:`GeonError`
    naming a missing input, a shape that does not fit, or what XLA refused."""
    ns = load_program(graph)
    try:
        mesh = ns["make_mesh"]()
        began = time.perf_counter()
        compiled = ns["compile_program"](mesh)
        compiled_at = time.perf_counter()
        placed = ns["place_inputs"](arrays, mesh)
        outputs = ns["fetch"](compiled(placed))
        done = time.perf_counter()
    except SystemExit as exc:  # the program's own refusals
        raise GeonError(str(exc)) from None
    return JaxRun(
        outputs, compiled.as_text(), ns["DEVICES"], compiled_at - began, done - compiled_at
    )

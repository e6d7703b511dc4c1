"""Hardware profiles (DESIGN.md §9, issue 16 item 4): what one device computes and holds, and
how fast each mesh axis's link moves bytes.

A profile is JSON::

    {"name": "h100-sxm-8",
     "device": {"flops": {"float32": 6.7e13, ...}, "memoryBandwidth": 3.35e12,
                "memory": 8e10, "efficiency": 0.7, "kernelFloor": 5e-6},
     "links": {"tp": {"bandwidth": 4.5e11, "latency": 2e-6}},
     "defaultLink": {"bandwidth": 4.5e11, "latency": 2e-6}}

``flops`` is peak FLOP/s per dtype (``float32`` is required: a dtype the profile does not list
runs at the ``float32`` figure); ``memoryBandwidth`` bytes/s; ``memory`` bytes of capacity;
``efficiency`` in ``(0, 1]`` scales both peaks; ``kernelFloor`` seconds is the least an
application takes. A link's ``bandwidth`` is bytes/s in one direction and ``latency`` seconds
per step; a mesh axis without an entry in ``links`` uses ``defaultLink``.

Shipped profiles (figures and their sources: docs/cost-model.md) are loaded by name;
:data:`DEFAULT_PROFILE` is used when none is named.

>>> p = load_profile("h100-sxm-8")
>>> p.peak("float16"), p.peak("int64") == p.peak("float32"), p.link("tp").bandwidth
(989500000000000.0, True, 450000000000.0)
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from importlib import resources
from typing import Any

from geon.core.dtypes import DTYPE_BYTES
from geon.core.errors import DocumentError, LimitError, quote
from geon.core.limits import MAX_AXIS_NAME_LENGTH, MAX_MESH_AXES, show_int

__all__ = [
    "DEFAULT_PROFILE",
    "MAX_PROFILE_BYTES",
    "DeviceSpec",
    "Link",
    "Profile",
    "load_profile",
    "parse_profile",
    "shipped_profiles",
]

DEFAULT_PROFILE = "h100-sxm-8"
"""The profile used when none is named: one 8-GPU NVLink node."""

MAX_PROFILE_BYTES = 1 << 20
"""The largest profile file read (a profile is a few hundred bytes)."""

_MAX_LINKS = 4 * MAX_MESH_AXES
"""At most this many entries in ``links``."""


@dataclass(frozen=True, slots=True)
class Link:
    """A mesh axis's link: ``bandwidth`` bytes/s in one direction, ``latency`` seconds."""

    bandwidth: float
    latency: float

    def to_json(self) -> dict[str, float]:
        return {"bandwidth": self.bandwidth, "latency": self.latency}


@dataclass(frozen=True, slots=True)
class DeviceSpec:
    """One device: peak FLOP/s per dtype, memory bandwidth (bytes/s) and capacity (bytes), the
    efficiency factor and the per-kernel floor (seconds)."""

    flops: tuple[tuple[str, float], ...]
    memory_bandwidth: float
    memory: float
    efficiency: float
    kernel_floor: float

    def to_json(self) -> dict[str, Any]:
        return {
            "flops": dict(self.flops),
            "memoryBandwidth": self.memory_bandwidth,
            "memory": self.memory,
            "efficiency": self.efficiency,
            "kernelFloor": self.kernel_floor,
        }


@dataclass(frozen=True, slots=True)
class Profile:
    """A hardware profile: the device, the links per mesh axis and the default link."""

    name: str
    device: DeviceSpec
    links: tuple[tuple[str, Link], ...]
    default_link: Link

    def peak(self, dtype: str) -> float:
        """Peak FLOP/s for ``dtype`` (the ``float32`` figure when the profile lists none)."""
        flops = dict(self.device.flops)
        return flops.get(dtype, flops["float32"])

    def link(self, mesh_axis: str) -> Link:
        """The link of ``mesh_axis`` (``defaultLink`` when the profile names none)."""
        return dict(self.links).get(mesh_axis, self.default_link)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "device": self.device.to_json(),
            "links": {axis: link.to_json() for axis, link in self.links},
            "defaultLink": self.default_link.to_json(),
        }


def _number(data: Any, field: str, *, zero: bool = False, most: float = math.inf) -> float:
    """A finite number > 0 (>= 0 with ``zero``) and <= ``most``, or a DocumentError naming it."""
    ok = isinstance(data, int | float) and not isinstance(data, bool) and math.isfinite(data)
    if ok and (data >= 0 if zero else data > 0) and data <= most:
        return float(data)
    low = ">= 0" if zero else "> 0"
    high = f" and <= {most:g}" if most != math.inf else ""
    raise DocumentError(f"profile field {field} is {quote(data)}; expected a number {low}{high}")


def _object(data: Any, field: str, keys: tuple[str, ...]) -> dict[str, Any]:
    """A JSON object with exactly ``keys`` (all required), or a DocumentError naming the field."""
    if not isinstance(data, dict):
        raise DocumentError(f"profile field {field} is {quote(data)}; expected an object")
    missing = [k for k in keys if k not in data]
    extra = [k for k in data if k not in keys]
    if missing or extra:
        wrong = f"lacks {quote(missing[0])}" if missing else f"has unknown key {quote(extra[0])}"
        raise DocumentError(f"profile field {field} {wrong}; expected the keys ({', '.join(keys)})")
    return data


def _link(data: Any, field: str) -> Link:
    d = _object(data, field, ("bandwidth", "latency"))
    return Link(
        _number(d["bandwidth"], f"{field}.bandwidth"),
        _number(d["latency"], f"{field}.latency", zero=True),
    )


def _flops(data: Any) -> tuple[tuple[str, float], ...]:
    if not isinstance(data, dict):
        raise DocumentError(
            f"profile field device.flops is {quote(data)}; expected an object dtype -> FLOP/s"
        )
    for dtype in data:
        if dtype not in DTYPE_BYTES:
            raise DocumentError(
                f"profile field device.flops has dtype {quote(dtype)}; expected one of "
                f"({', '.join(DTYPE_BYTES)})"
            )
    if "float32" not in data:
        raise DocumentError(
            'profile field device.flops lacks "float32"; expected it (it is the figure used for '
            "dtypes the profile does not list)"
        )
    return tuple((dtype, _number(v, f"device.flops.{dtype}")) for dtype, v in data.items())


def parse_profile(data: Any) -> Profile:
    """A profile from its JSON; :class:`DocumentError` naming the bad field and what is valid.

    >>> parse_profile({"name": "x"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    geon.core.errors.DocumentError: profile field (top level) lacks "device"; expected the keys...
    """
    d = _object(data, "(top level)", ("name", "device", "links", "defaultLink"))
    name = d["name"]
    if not isinstance(name, str) or not 0 < len(name) <= MAX_AXIS_NAME_LENGTH:
        raise DocumentError(
            f"profile field name is {quote(name)}; expected a string of 1 to "
            f"{MAX_AXIS_NAME_LENGTH} characters"
        )
    dev = _object(
        d["device"],
        "device",
        ("flops", "memoryBandwidth", "memory", "efficiency", "kernelFloor"),
    )
    device = DeviceSpec(
        _flops(dev["flops"]),
        _number(dev["memoryBandwidth"], "device.memoryBandwidth"),
        _number(dev["memory"], "device.memory"),
        _number(dev["efficiency"], "device.efficiency", most=1.0),
        _number(dev["kernelFloor"], "device.kernelFloor", zero=True),
    )
    links = d["links"]
    if not isinstance(links, dict):
        raise DocumentError(
            f"profile field links is {quote(links)}; expected an object mesh axis -> link"
        )
    if len(links) > _MAX_LINKS:
        raise LimitError(
            f"profile field links has {show_int(len(links))} entries; expected at most {_MAX_LINKS}"
        )
    parsed = tuple((str(axis), _link(v, f"links.{axis}")) for axis, v in links.items())
    return Profile(name, device, parsed, _link(d["defaultLink"], "defaultLink"))


def shipped_profiles() -> tuple[str, ...]:
    """The names of the profiles shipped with geon, sorted."""
    return tuple(_shipped())


@functools.cache
def _shipped() -> dict[str, Profile]:
    """The shipped profiles by name, read and checked once per process (package data does not
    change while it runs)."""
    folder = resources.files("geon.core.plans.cost").joinpath("profiles")
    found = {}
    for path in sorted(folder.iterdir(), key=lambda p: p.name):
        if path.name.endswith(".json"):
            found[path.name.removesuffix(".json")] = parse_profile(
                json.loads(path.read_text("utf-8"))
            )
    return found


def load_profile(name_or_path: str | None = None) -> Profile:
    """A shipped profile by name, or a profile file by path (:data:`DEFAULT_PROFILE` for None).

    Raises :class:`DocumentError` naming the file, or the shipped names, when it cannot be read.
    """
    name = DEFAULT_PROFILE if name_or_path is None else name_or_path
    shipped = _shipped()
    if name in shipped:
        return shipped[name]
    try:
        with open(name, "rb") as f:
            raw = f.read(MAX_PROFILE_BYTES + 1)
    except OSError as exc:
        raise DocumentError(
            f"profile {quote(name)} is neither a shipped profile nor a readable file "
            f"({exc.strerror or exc}); expected one of ({', '.join(shipped_profiles())}) or a "
            "path to a profile JSON file"
        ) from None
    if len(raw) > MAX_PROFILE_BYTES:
        raise LimitError(
            f"profile file {quote(name)} is over {show_int(MAX_PROFILE_BYTES)} bytes; expected "
            "a profile of a few hundred bytes"
        )
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise DocumentError(f"profile file {quote(name)} is not valid JSON: {exc}") from None
    return parse_profile(data)

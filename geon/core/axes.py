"""Named axes: declarations, references with dual levels, and ordered axis lists (DESIGN.md §2).

>>> H, W = Axis("H", 2), Axis("W", 3)
>>> str(W - 1), str(W + 1), str((W - 1).T), str(H * W)
('W-1', 'W+1', 'W', 'H*W')
>>> Axes.of([H, W - 1]).T
Axes(W, H-1)
>>> AxisRef.parse("W-1", {"W": W}) == W - 1
True

Identity. An :class:`Axis` is a value: two declarations are the same axis exactly when every
field agrees (name, length, roles, cls, batch, doc). An :class:`AxisRef` is an axis plus a dual
level; a level-0 reference *is* its axis: ``AxisRef(W, 0) == W`` and both hash alike, so an
:class:`Axes` compares equal to a plain tuple of axes (``z.axes == (H, N)``). ``__eq__`` and
``__hash__`` of all three classes read the same key (:meth:`Axis.key`), so they always agree.
A graph never holds two different declarations with the same name; the builder refuses that
(:class:`~geon.core.errors.AxisError`) and the checker reports it (``AxisDeclarations``).

Composite axes (``H*W``, from ``flatten``) are :class:`CompositeRef` values: an ordered group of
at least two references whose length is the product of theirs. ``Ref`` is either kind.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias, overload

from geon.core.errors import AxisError
from geon.core.limits import (
    INT64_MAX,
    INT64_MIN,
    MAX_AXIS_NAME_LENGTH,
    MAX_AXIS_REF_LENGTH,
    in_int64,
    show_int,
    show_text,
)

__all__ = [
    "AXIS_NAME",
    "KNOWN_ROLES",
    "Axes",
    "AxesLike",
    "Axis",
    "AxisRef",
    "CompositeRef",
    "Ref",
    "RefLike",
    "format_axes",
    "parse_ref_string",
    "quote_axes",
    "to_ref",
]

AXIS_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
"""What an axis name must match."""

KNOWN_ROLES: tuple[str, ...] = ("Channel", "Channelout", "Depth", "Height", "Time", "Width")
"""The roles an axis may carry; ``conv2d`` reads ``Channel``, ``Height``, ``Width`` and
``Channelout``."""

_REF_PART = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\s*([+-])\s*([0-9]+))?")
"""One part of a reference once stripped of outer whitespace: a name, then an optional level.
No two quantifiers here can both take the same character (a name never holds whitespace, and
whitespace only precedes a sign or digits), so matching backtracks at most once per character:
linear in the length. Two ``\\s*`` side by side around an optional group, as
``^\\s*NAME\\s*(LEVEL)?\\s*$`` had, split every run of spaces every way: quadratic."""


def _level_suffix(level: int) -> str:
    if level == 0:
        return ""
    return f"{level:+d}"


@dataclass(frozen=True, slots=True, eq=False, init=False)
class Axis:
    """An axis declaration: one per name and graph.

    >>> N = Axis("N", 4, roles="Time", doc="sequence")
    >>> N.roles, N.length, N - 1
    (('Time',), 4, AxisRef(N-1))

    ``length`` is an integer >= 1, or None while it is not bound. ``roles`` is a tuple of
    :data:`KNOWN_ROLES` (a single string is accepted). Errors name the bad value:

    >>> Axis("2x", 3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    geon.core.errors.AxisError: axis name "2x" is invalid; expected a letter or "_" followed by ...
    """

    name: str
    length: int | None = None
    roles: tuple[str, ...] = ()
    cls: str | None = None
    batch: bool = False
    doc: str = ""

    def __init__(
        self,
        name: str,
        length: int | None = None,
        roles: str | Iterable[str] = (),
        cls: str | None = None,
        batch: bool = False,
        doc: str = "",
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "length", length)
        object.__setattr__(self, "roles", (roles,) if isinstance(roles, str) else tuple(roles))
        object.__setattr__(self, "cls", cls)
        object.__setattr__(self, "batch", batch)
        object.__setattr__(self, "doc", doc)
        self._validate()

    def _validate(self) -> None:
        if isinstance(self.name, str) and len(self.name) > MAX_AXIS_NAME_LENGTH:
            raise AxisError(
                f'axis name "{show_text(self.name)}" is too long; expected at most '
                f"{MAX_AXIS_NAME_LENGTH} characters"
            )
        if not isinstance(self.name, str) or not AXIS_NAME.match(self.name):
            raise AxisError(
                f'axis name "{self.name}" is invalid; expected a letter or "_" followed by '
                'letters, digits or "_"'
            )
        length = self.length
        if length is not None and (
            isinstance(length, bool) or not isinstance(length, int) or length < 1
        ):
            raise AxisError(
                f'axis "{self.name}" has length "{length}"; expected an integer >= 1 or None'
            )
        if length is not None and length > INT64_MAX:
            raise AxisError(
                f'axis "{self.name}" has length "{show_int(length)}"; expected at most {INT64_MAX}'
            )
        for role in self.roles:
            if role not in KNOWN_ROLES:
                raise AxisError(
                    f'axis "{self.name}" has role "{role}"; expected one of {_quoted(KNOWN_ROLES)}'
                )
        if self.cls is not None and not isinstance(self.cls, str):
            raise AxisError(f'axis "{self.name}" has cls "{self.cls}"; expected a string or None')
        if not isinstance(self.batch, bool):
            raise AxisError(f'axis "{self.name}" has batch "{self.batch}"; expected true or false')

    # -- identity ----------------------------------------------------------------------------

    def key(self) -> tuple[Any, ...]:
        """The identity of this axis as a reference at level 0 (see the module docstring)."""
        return (self.name, self.length, self.roles, self.cls, self.batch, self.doc, 0)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Axis, AxisRef)):
            return self.key() == other.key()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.key())

    # -- references --------------------------------------------------------------------------

    @property
    def ref(self) -> AxisRef:
        """This axis at dual level 0."""
        return AxisRef(self, 0)

    def dual(self, level: int = -1) -> AxisRef:
        """This axis at dual level ``level``."""
        return AxisRef(self, level)

    @property
    def T(self) -> AxisRef:
        """The transposed reference: level 0 -> -1."""
        return AxisRef(self, -1)

    def __sub__(self, k: int) -> AxisRef:
        return AxisRef(self, -_int_level(k, self.name))

    def __add__(self, k: int) -> AxisRef:
        return AxisRef(self, _int_level(k, self.name))

    def __mul__(self, other: RefLike) -> CompositeRef:
        return CompositeRef.of([self, other])

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        args = [f'"{self.name}"', repr(self.length)]
        if self.roles:
            args.append(f"roles={self.roles!r}")
        if self.cls is not None:
            args.append(f"cls={self.cls!r}")
        if self.batch:
            args.append("batch=True")
        return f"Axis({', '.join(args)})"

    def replace(self, **changes: Any) -> Axis:
        """A copy with the given fields changed."""
        fields: dict[str, Any] = {
            "name": self.name,
            "length": self.length,
            "roles": self.roles,
            "cls": self.cls,
            "batch": self.batch,
            "doc": self.doc,
        }
        fields.update(changes)
        return Axis(**fields)

    # -- JSON (the body of an Axis node) -----------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The body of this axis's ``Axis`` node: ``{name, length, roles?, cls?, batch?, doc?}``."""
        body: dict[str, Any] = {"name": self.name, "length": self.length}
        if self.roles:
            body["roles"] = list(self.roles)
        if self.cls is not None:
            body["cls"] = self.cls
        if self.batch:
            body["batch"] = True
        if self.doc:
            body["doc"] = self.doc
        return body

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> Axis:
        """An axis from an ``Axis`` node body; raises :class:`AxisError` naming the bad field."""
        if not isinstance(body, Mapping):
            raise AxisError(f'axis body "{body!r}" is not an object; expected {{"name", "length"}}')
        roles = body.get("roles", ())
        if not isinstance(roles, (list, tuple)):
            raise AxisError(
                f'axis "{body.get("name")}" has roles "{roles!r}"; expected a list of role names'
            )
        doc = body.get("doc", "")
        return cls(
            name=body.get("name"),  # type: ignore[arg-type]
            length=body.get("length"),
            roles=tuple(roles),
            cls=body.get("cls"),
            batch=body.get("batch", False),
            doc=doc if isinstance(doc, str) else str(doc),
        )


def _int_level(k: object, name: str) -> int:
    if isinstance(k, bool) or not isinstance(k, int):
        raise AxisError(f'dual level "{k!r}" for axis "{name}" is invalid; expected an integer')
    if not in_int64(k):
        raise AxisError(
            f'dual level "{show_int(k)}" for axis "{name}" is out of range; expected an integer '
            f"from {INT64_MIN} to {INT64_MAX}"
        )
    return k


@dataclass(frozen=True, slots=True, eq=False)
class AxisRef:
    """An axis at a dual level: ``W`` (0), ``W-1`` (-1), ``W+1`` (+1).

    >>> W = Axis("W", 3)
    >>> r = W - 1
    >>> r.level, r.length, str(r), str(r + 2), str(r.T)
    (-1, 3, 'W-1', 'W+1', 'W')
    """

    axis: Axis
    level: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.axis, str):  # AxisRef("W", -1): an axis known only by its name
            object.__setattr__(self, "axis", Axis(self.axis))
        if not isinstance(self.axis, Axis):
            raise AxisError(f'"{self.axis!r}" is not an axis; expected an Axis or an axis name')
        _int_level(self.level, self.axis.name)

    def key(self) -> tuple[Any, ...]:
        """Identity: the axis's fields and the level (level 0 equals the axis itself)."""
        return (*self.axis.key()[:-1], self.level)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Axis, AxisRef)):
            return self.key() == other.key()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.key())

    @property
    def name(self) -> str:
        """The declared axis's name (without the level)."""
        return self.axis.name

    @property
    def length(self) -> int | None:
        return self.axis.length

    @property
    def cls(self) -> str | None:
        return self.axis.cls

    @property
    def roles(self) -> tuple[str, ...]:
        return self.axis.roles

    @property
    def axes(self) -> tuple[Axis, ...]:
        """The declared axes this reference mentions."""
        return (self.axis,)

    def shift(self, delta: int) -> AxisRef:
        """The same axis ``delta`` levels up."""
        return AxisRef(self.axis, self.level + delta)

    @property
    def T(self) -> AxisRef:
        """The transposed reference: level k -> -1-k."""
        return AxisRef(self.axis, -1 - self.level)

    def __sub__(self, k: int) -> AxisRef:
        return self.shift(-_int_level(k, self.name))

    def __add__(self, k: int) -> AxisRef:
        return self.shift(_int_level(k, self.name))

    def __mul__(self, other: RefLike) -> CompositeRef:
        return CompositeRef.of([self, other])

    def __str__(self) -> str:
        return self.axis.name + _level_suffix(self.level)

    def __repr__(self) -> str:
        return f"AxisRef({self})"

    @staticmethod
    def parse(
        text: str, axes: Mapping[str, Axis] | Callable[[str], Axis | None] | None = None
    ) -> Ref:
        """Parse ``"W"``, ``"W-1"``, ``"W+1"`` or a composite ``"H*W"``, resolving names in
        ``axes``; without ``axes`` each name stands for an unbound ``Axis(name)``.

        >>> AxisRef.parse("H*W-1", {"H": Axis("H", 2), "W": Axis("W", 3)}).length
        6
        >>> AxisRef.parse("W+1").level
        1
        """
        parts = parse_ref_string(text)
        if axes is None:
            refs0 = [AxisRef(Axis(name), level) for name, level in parts]
            return refs0[0] if len(refs0) == 1 else CompositeRef(tuple(refs0))
        lookup = axes.get if isinstance(axes, Mapping) else axes
        refs: list[AxisRef] = []
        for name, level in parts:
            axis = lookup(name)
            if axis is None:
                known = tuple(axes) if isinstance(axes, Mapping) else ()
                hint = f"; expected one of {_quoted(known)}" if known else "; declare it first"
                raise AxisError(f'axis "{name}" in "{text}" is not declared{hint}')
            refs.append(AxisRef(axis, level))
        if len(refs) == 1:
            return refs[0]
        return CompositeRef(tuple(refs))


@dataclass(frozen=True, slots=True)
class CompositeRef:
    """A group of adjacent axes merged by ``flatten``: ``H*W``, length = product.

    >>> H, W = Axis("H", 2), Axis("W", 3)
    >>> c = H * W
    >>> str(c), c.length, str(c.T)
    ('H*W', 6, 'H-1*W-1')
    """

    parts: tuple[AxisRef, ...]

    def __post_init__(self) -> None:
        if len(self.parts) < 2:
            raise AxisError(
                f'a composite axis needs at least two parts; got "{_join(self.parts, "*")}"'
            )
        seen: set[AxisRef] = set()
        for part in self.parts:
            if not isinstance(part, AxisRef):
                raise AxisError(f'composite part "{part}" is invalid; expected an axis reference')
            if part in seen:
                raise AxisError(
                    f'axis "{part}" appears twice in composite "{_join(self.parts, "*")}"; '
                    "each part appears once"
                )
            seen.add(part)

    @classmethod
    def of(cls, items: Iterable[RefLike]) -> CompositeRef:
        """A composite from axes, references or composites (nested groups are flattened)."""
        parts: list[AxisRef] = []
        for item in items:
            ref = to_ref(item)
            if isinstance(ref, CompositeRef):
                parts.extend(ref.parts)
            else:
                parts.append(ref)
        return cls(tuple(parts))

    def key(self) -> tuple[Any, ...]:
        return ("*", *(p.key() for p in self.parts))

    @property
    def name(self) -> str:
        return str(self)

    @property
    def level(self) -> int:
        """The level of the first part (composites shift as a whole)."""
        return self.parts[0].level

    @property
    def length(self) -> int | None:
        total = 1
        for part in self.parts:
            if part.length is None:
                return None
            total *= part.length
        return total

    @property
    def cls(self) -> str | None:
        return None

    @property
    def roles(self) -> tuple[str, ...]:
        return ()

    @property
    def axes(self) -> tuple[Axis, ...]:
        return tuple(p.axis for p in self.parts)

    def shift(self, delta: int) -> CompositeRef:
        return CompositeRef(tuple(p.shift(delta) for p in self.parts))

    @property
    def T(self) -> CompositeRef:
        return CompositeRef(tuple(p.T for p in self.parts))

    def __sub__(self, k: int) -> CompositeRef:
        return self.shift(-_int_level(k, str(self)))

    def __add__(self, k: int) -> CompositeRef:
        return self.shift(_int_level(k, str(self)))

    def __mul__(self, other: RefLike) -> CompositeRef:
        return CompositeRef.of([self, other])

    def __str__(self) -> str:
        return _join(self.parts, "*")

    def __repr__(self) -> str:
        return f"CompositeRef({self})"


Ref: TypeAlias = AxisRef | CompositeRef
RefLike: TypeAlias = Axis | AxisRef | CompositeRef


def to_ref(item: object) -> Ref:
    """An :class:`Axis` as its level-0 reference; references pass through.

    >>> to_ref(Axis("H", 2))
    AxisRef(H)
    """
    if isinstance(item, Axis):
        return AxisRef(item, 0)
    if isinstance(item, (AxisRef, CompositeRef)):
        return item
    raise AxisError(f'"{item!r}" is not an axis; expected an Axis, an axis reference such as W-1')


def parse_ref_string(text: str) -> tuple[tuple[str, int], ...]:
    """``"W-1"`` -> ``(("W", -1),)``; ``"H*W+1"`` -> ``(("H", 0), ("W", 1))``.

    >>> parse_ref_string("H*W+1"), parse_ref_string(" W - 1 ")
    ((('H', 0), ('W', 1)), (('W', -1),))

    Linear in the length of ``text``, which may hold at most :data:`MAX_AXIS_REF_LENGTH`
    characters (whitespace around names and signs included).
    """
    if not isinstance(text, str):
        raise AxisError(f'axis reference "{text!r}" is invalid; expected a string such as "W-1"')
    if len(text) > MAX_AXIS_REF_LENGTH:
        raise AxisError(
            f'axis reference "{show_text(text)}" is too long; expected at most '
            f"{MAX_AXIS_REF_LENGTH} characters"
        )
    out: list[tuple[str, int]] = []
    for part in text.split("*"):
        m = _REF_PART.fullmatch(part.strip())
        if not m:
            raise AxisError(
                f'axis reference "{text}" is invalid; expected a name with an optional dual '
                'level, e.g. "W", "W-1", "W+1", or a composite "H*W"'
            )
        name, sign, digits = m.groups()
        level = 0 if sign is None else int(digits) * (1 if sign == "+" else -1)
        out.append((name, _int_level(level, name)))
    return tuple(out)


def _join(refs: Iterable[object], sep: str) -> str:
    return sep.join(str(r) for r in refs)


def _quoted(items: Iterable[object]) -> str:
    return "(" + ", ".join(f'"{i}"' for i in items) + ")"


def quote_axes(items: Iterable[object]) -> str:
    """``("H", "W-1")`` — how messages list axes."""
    return _quoted(items)


def format_axes(items: Iterable[object]) -> str:
    """``(H, W-1)`` — how axis lists are shown."""
    return "(" + _join(items, ", ") + ")"


AxesLike: TypeAlias = "Axes | Sequence[Axis | AxisRef | CompositeRef]"


@dataclass(frozen=True, slots=True)
class Axes(Sequence[Ref]):
    """The axes of a tensor: an ordered list of references without duplicates.

    >>> H, W = Axis("H", 2), Axis("W", 3)
    >>> a = Axes.of([H, W - 1])
    >>> a == (H, W - 1), a.lengths, [str(r) for r in a]
    (True, (2, 3), ['H', 'W-1'])
    >>> Axes.of([H, H])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    geon.core.errors.AxisError: axis "H" appears twice in (H, H); the axes of a tensor are ...
    """

    refs: tuple[Ref, ...] = field(default=())

    def __post_init__(self) -> None:
        if not isinstance(self.refs, tuple) or any(isinstance(r, Axis) for r in self.refs):
            if isinstance(self.refs, (Axis, AxisRef, CompositeRef, str)):
                raise AxisError(f'"{self.refs!r}" is not a list of axes; expected e.g. [H, W-1]')
            object.__setattr__(
                self,
                "refs",
                tuple(to_ref(r) if isinstance(r, Axis) else r for r in self.refs),
            )
        seen: set[Ref] = set()
        for ref in self.refs:
            if not isinstance(ref, (AxisRef, CompositeRef)):
                raise AxisError(f'"{ref!r}" is not an axis reference')
            if ref in seen:
                raise AxisError(
                    f'axis "{ref}" appears twice in {format_axes(self.refs)}; '
                    "the axes of a tensor are duplicate-free"
                )
            seen.add(ref)

    @classmethod
    def of(cls, items: Iterable[RefLike] | Axes) -> Axes:
        """Axes from axes and references (an :class:`Axis` stands for its level 0)."""
        if isinstance(items, Axes):
            return items
        if isinstance(items, (Axis, AxisRef, CompositeRef)):
            return cls((to_ref(items),))
        return cls(tuple(to_ref(i) for i in items))

    @classmethod
    def parse(
        cls,
        texts: Iterable[str],
        axes: Mapping[str, Axis] | Callable[[str], Axis | None],
    ) -> Axes:
        """Axes from reference strings such as ``["H", "W-1"]`` (a ``TensorAxes`` tag)."""
        return cls(tuple(AxisRef.parse(t, axes) for t in texts))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Axes):
            return self.refs == other.refs
        if isinstance(other, tuple):
            return self.refs == other
        if isinstance(other, list):
            return list(self.refs) == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.refs)

    def __len__(self) -> int:
        return len(self.refs)

    def __iter__(self) -> Iterator[Ref]:
        return iter(self.refs)

    @overload
    def __getitem__(self, i: int) -> Ref: ...

    @overload
    def __getitem__(self, i: slice) -> Axes: ...

    def __getitem__(self, i: int | slice) -> Ref | Axes:
        if isinstance(i, slice):
            return Axes(self.refs[i])
        return self.refs[i]

    def __contains__(self, item: object) -> bool:
        if isinstance(item, Axis):
            item = AxisRef(item, 0)
        return item in self.refs

    def index(self, item: object, start: int = 0, stop: int | None = None) -> int:
        if isinstance(item, Axis):
            item = AxisRef(item, 0)
        try:
            return self.refs.index(item, start, len(self.refs) if stop is None else stop)
        except ValueError:
            raise AxisError(
                f'axis "{item}" is not in {format_axes(self.refs)}; expected one of '
                f"{_quoted(self.refs)}"
            ) from None

    @property
    def names(self) -> tuple[str, ...]:
        """Each reference as written: ``("H", "W-1")`` (the ``TensorAxes`` tag value)."""
        return tuple(str(r) for r in self.refs)

    @property
    def lengths(self) -> tuple[int | None, ...]:
        return tuple(r.length for r in self.refs)

    @property
    def shape(self) -> tuple[int, ...]:
        """The lengths; raises :class:`AxisError` naming an unbound axis."""
        out: list[int] = []
        for r in self.refs:
            if r.length is None:
                raise AxisError(
                    f'axis "{r}" has no length; bind it (e.g. Axis("{r.axes[0].name}", 4)) first'
                )
            out.append(r.length)
        return tuple(out)

    @property
    def T(self) -> Axes:
        """Reversed order, each level k mapped to -1-k."""
        return Axes(tuple(r.T for r in reversed(self.refs)))

    @property
    def declared(self) -> tuple[Axis, ...]:
        """Every declared axis mentioned, in order, without duplicates."""
        out: dict[Axis, None] = {}
        for r in self.refs:
            for a in r.axes:
                out[a] = None
        return tuple(out)

    def __str__(self) -> str:
        return format_axes(self.refs)

    def __repr__(self) -> str:
        return "Axes" + format_axes(self.refs)

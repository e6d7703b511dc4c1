"""JSON Schemas (draft 2020-12) for every node body and tag value of a geon / LoomGraph document.

>>> from geon.core.graph import TENSOR
>>> ok = validator_for_node(TENSOR)
>>> ok({"dtype": "int32", "range": {"start": [0], "end": [4]}}), ok({"dtype": "int32"})
(True, False)
>>> [e.path for e in errors_for_node(TENSOR, {"dtype": 3, "range": {"start": [0], "end": [1]}})]
['.dtype']

The schemas check *structure* (types, required fields, shapes of ranges, selections and IPFs);
*values* are the constraints' business (a dtype outside the list is ``TensorDTypesAreValid``, an
axis length of 0 is ``AxisDeclarations``, a range with start > end is reported by
``SchemaConformance`` itself because JSON Schema cannot compare two arrays). Node bodies accept
fields beyond the ones listed (extensions are kept and round-trip), while ranges, selections,
IPFs and geon's tags are closed so that a misspelt key is caught.

Sizes are bounded so that no document asks for unbounded work (:mod:`geon.core.limits`): every
integer is a signed 64-bit integer, an axis name holds at most 128 characters and an axis
reference at most 1024, and a mesh has at most 16 axes of at most 65,536 devices each. A test
keeps these numbers equal to the constants of :mod:`geon.core.limits`.

Each schema file has ``$id`` ``urn:geon:2026-11:schemas/<Name>.json`` and shared pieces live in
``common.json``. Validation runs in two steps: a validator compiled from the schema into plain
Python closures answers "valid or not" quickly (this is what runs on every keystroke); only for an
invalid value does the reference implementation (:mod:`jsonschema`) produce the detailed errors.
A test compares the two on generated documents.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from geon.core.errors import GeonError
from geon.core.limits import INT64_MAX, INT64_MIN, show_int
from geon.core.nodes import NODE_TYPES, TAG_TYPES

__all__ = [
    "SCHEMA_NAMES",
    "SchemaError",
    "clear_memos",
    "compile_schema",
    "errors_for",
    "errors_for_node",
    "errors_for_tag",
    "load",
    "registry",
    "validator",
    "validator_for_node",
    "validator_for_tag",
]

ID_PREFIX = "urn:geon:2026-11:schemas/"

SCHEMA_NAMES = (*NODE_TYPES, *TAG_TYPES, "node", "graph", "common")
"""The schema files: one per node type and tag type, the node envelope, the document, common."""

_BY_URL = {url: name for name, url in (*NODE_TYPES.items(), *TAG_TYPES.items())}


@cache
def load(name: str) -> dict[str, Any]:
    """The schema ``<name>.json`` as JSON data (``name`` is e.g. ``"Tensor"`` or ``"common"``)."""
    if name not in SCHEMA_NAMES:
        raise KeyError(
            f'schema "{name}" does not exist; expected one of ('
            + ", ".join(f'"{n}"' for n in SCHEMA_NAMES)
            + ")"
        )
    text = resources.files(__name__).joinpath(f"{name}.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def _by_id() -> dict[str, dict[str, Any]]:
    return {load(n)["$id"]: load(n) for n in SCHEMA_NAMES}


@cache
def registry() -> Any:
    """A :class:`referencing.Registry` holding every schema under its ``$id``."""
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    return Registry().with_resources(
        (sid, Resource.from_contents(s, default_specification=DRAFT202012))
        for sid, s in _by_id().items()
    )


@cache
def _reference_validator(name: str) -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(load(name), registry=registry())


# --------------------------------------------------------------------------------------------
# The compiled validator


class SchemaError(GeonError):
    """A schema uses a keyword the compiled validator does not implement (a bug in geon)."""


Check = Callable[[Any], bool]

_TYPE_TESTS = {
    "object": "type({v}) is dict",
    "array": "type({v}) is list",
    "string": "type({v}) is str",
    "integer": "(type({v}) is int or (type({v}) is float and {v}.is_integer()))",
    "number": "type({v}) in (int, float)",
    "boolean": "type({v}) is bool",
    "null": "{v} is None",
}

_ANNOTATIONS = {"$schema", "$id", "$defs", "title", "description", "$comment", "examples"}
_SUPPORTED = {
    "$ref",
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "maxProperties",
    "pattern",
    "enum",
    "const",
}


def _resolve(ref: str, base: str) -> tuple[str, dict[str, Any]]:
    url = base.split("#")[0] + ref if ref.startswith("#") else ref
    doc_id, _, pointer = url.partition("#")
    node: Any = _by_id()[doc_id]
    for part in filter(None, pointer.split("/")):
        node = node[part]
    if not isinstance(node, dict):
        raise SchemaError(f'"$ref" "{ref}" does not point at a schema')
    return url, node


class _Codegen:
    """Turns a schema into the source of one Python function per schema (and per ``$ref``
    target) that returns False at the first violation; plain loops, no per-value closures."""

    def __init__(self) -> None:
        self.functions: dict[str, str] = {}  # url -> function name
        self.sources: list[str] = []
        self.constants: dict[str, Any] = {}
        self.counter = 0
        self.expanding: list[str] = []

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def const(self, value: Any) -> str:
        name = self.fresh("_c")
        self.constants[name] = value
        return name

    def function(self, url: str, schema: dict[str, Any]) -> str:
        name = self.functions.get(url)
        if name is not None:
            return name
        name = self.fresh("_f")
        self.functions[url] = name
        lines = [f"def {name}(v):"]
        self.expanding.append(url)
        lines += self.body(schema, "v", url, 1)
        self.expanding.pop()
        lines.append("    return True")
        self.sources.append("\n".join(lines))
        return name

    def body(self, schema: dict[str, Any], v: str, base: str, depth: int) -> list[str]:
        base = schema.get("$id", base)
        unknown = set(schema) - _SUPPORTED - _ANNOTATIONS
        if unknown:
            raise SchemaError(
                f"schema keywords {sorted(unknown)} are not supported by compile_schema"
            )
        pad = "    " * depth
        out: list[str] = []
        if "$ref" in schema:
            url, target = _resolve(schema["$ref"], base)
            if url in self.expanding:  # a recursive schema: call the function instead
                fn = self.function(url, target)
                out.append(f"{pad}if not {fn}({v}): return False")
            else:  # inline the target: no call per value
                self.expanding.append(url)
                out += self.body(target, v, url, depth)
                self.expanding.pop()
        # once this schema's own single "type" has been tested, later tests need no type guard
        known: str | None = None
        if "type" in schema:
            kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            test = " or ".join(_TYPE_TESTS[k].format(v=v) for k in kinds)
            out.append(f"{pad}if not ({test}): return False")
            known = kinds[0] if len(kinds) == 1 else None

        def guard(kind: str) -> str:
            return "" if known == kind else f"type({v}) is {_PY_TYPES[kind]} and "

        if "enum" in schema:
            c = self.const(schema["enum"])
            out.append(f"{pad}if not any(_json_equal({v}, a) for a in {c}): return False")
        if "const" in schema:
            c = self.const(schema["const"])
            out.append(f"{pad}if not _json_equal({v}, {c}): return False")
        is_num = f"type({v}) in (int, float)"
        if "minimum" in schema:
            out.append(f"{pad}if {is_num} and {v} < {schema['minimum']!r}: return False")
        if "maximum" in schema:
            out.append(f"{pad}if {is_num} and {v} > {schema['maximum']!r}: return False")
        if "minLength" in schema:
            out.append(
                f"{pad}if {guard('string')}len({v}) < {int(schema['minLength'])}: return False"
            )
        if "maxLength" in schema:
            out.append(
                f"{pad}if {guard('string')}len({v}) > {int(schema['maxLength'])}: return False"
            )
        if "pattern" in schema:
            # a string that matched once is remembered (ids recur in every selection)
            c = self.const(re.compile(schema["pattern"]))
            ok = self.const({})
            out.append(f"{pad}if {guard('string')}{v} not in {ok}:")
            out.append(f"{pad}    if {c}.search({v}) is None: return False")
            out.append(f"{pad}    if len({ok}) < {_REMEMBERED}: {ok}[{v}] = None")
        if "minItems" in schema:
            out.append(
                f"{pad}if {guard('array')}len({v}) < {int(schema['minItems'])}: return False"
            )
        if "maxItems" in schema:
            out.append(
                f"{pad}if {guard('array')}len({v}) > {int(schema['maxItems'])}: return False"
            )
        if "maxProperties" in schema:
            out.append(
                f"{pad}if {guard('object')}len({v}) > {int(schema['maxProperties'])}: return False"
            )
        required = list(schema.get("required", ()))
        for key in required:
            out.append(f"{pad}if {guard('object')}{key!r} not in {v}: return False")
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        if props or extra is not True:
            inner: list[str] = []
            for key, sub in props.items():
                x = self.fresh("_x")
                if known == "object" and key in required:  # present: tested above
                    inner.append(f"{pad}    {x} = {v}[{key!r}]")
                    inner += self.body(sub, x, base, depth + 1)
                    continue
                inner.append(f"{pad}    {x} = {v}.get({key!r}, _MISSING)")
                inner.append(f"{pad}    if {x} is not _MISSING:")
                inner += self.body(sub, x, base, depth + 2) or [f"{pad}        pass"]
            if extra is False:
                known_keys = self.const(frozenset(props))
                inner.append(f"{pad}    if not {v}.keys() <= {known_keys}: return False")
            elif extra is not True:
                k, x = self.fresh("_k"), self.fresh("_x")
                known_keys = self.const(frozenset(props))
                loop = [f"{pad}    for {k}, {x} in {v}.items():"]
                check = self.body(extra, x, base, depth + 3)
                if props:
                    loop.append(f"{pad}        if {k} not in {known_keys}:")
                    loop += check or [f"{pad}            pass"]
                else:
                    loop += [line[4:] for line in check] or [f"{pad}        pass"]
                inner += loop
            out.append(f"{pad}if {guard('object')}True:" if known != "object" else f"{pad}if 1:")
            out += inner
        if "items" in schema:
            x = self.fresh("_x")
            check = self.body(schema["items"], x, base, depth + 2)
            if check:
                if _int_items(schema["items"]):
                    # the common case, all plain ints, at C speed; floats and the rest loop
                    floor = schema["items"].get("minimum")
                    ceiling = schema["items"].get("maximum")
                    fast = f"{pad}if {guard('array')}_INTS.issuperset(map(type, {v})):"
                    out.append(fast)
                    if floor is not None:
                        out.append(f"{pad}    if {v} and min({v}) < {floor!r}: return False")
                    if ceiling is not None:
                        out.append(f"{pad}    if {v} and max({v}) > {ceiling!r}: return False")
                    if floor is None and ceiling is None:
                        out.append(f"{pad}    pass")
                    out.append(f"{pad}elif {guard('array')}True:")
                else:
                    out.append(f"{pad}if {guard('array')}True:")
                out.append(f"{pad}    for {x} in {v}:")
                out += check
        return out


_PY_TYPES = {"object": "dict", "array": "list", "string": "str"}
_REMEMBERED = 65536
"""At most this many strings are remembered per pattern as matching."""


def _int_items(schema: Any) -> bool:
    """Whether an ``items`` schema is ``{"type": "integer"}``, with at most a ``minimum`` and a
    ``maximum``."""
    return (
        isinstance(schema, dict)
        and schema.get("type") == "integer"
        and set(schema) <= {"type", "minimum", "maximum"}
    )


def compile_schema(schema: dict[str, Any], base: str = "") -> Check:
    """Compile a schema (the subset of draft 2020-12 geon's schemas use) into a fast
    ``value -> bool`` function; raises :class:`SchemaError` for a keyword outside the subset.

    >>> ok = compile_schema({"type": "array", "items": {"type": "integer"}, "maxItems": 2})
    >>> ok([1, 2]), ok([1, "2"]), ok([1, 2, 3])
    (True, False, False)
    """
    gen = _Codegen()
    entry = gen.function(schema.get("$id", base) + "#entry", schema)
    _MEMOS.extend(v for v in gen.constants.values() if isinstance(v, dict))
    namespace: dict[str, Any] = {
        "_MISSING": _MISSING,
        "_json_equal": _json_equal,
        "_INTS": frozenset({int}),
    }
    namespace.update(gen.constants)
    exec("\n\n".join(gen.sources), namespace)  # the source is generated above, from our schemas
    check: Check = namespace[entry]
    return check


_MISSING = object()

_MEMOS: list[dict[Any, None]] = []
"""The compiled validators' memos of strings that matched a pattern."""


def clear_memos() -> None:
    """Forget the strings the compiled validators remember as matching their patterns."""
    for memo in _MEMOS:
        memo.clear()


def _json_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return bool(a == b)


@cache
def validator(name: str) -> Check:
    """The compiled ``value -> bool`` validator of schema ``name``."""
    return compile_schema(load(name))


def validator_for_node(type_url: str) -> Check | None:
    """The body validator of a node type URL, or None for a type geon does not know."""
    name = _BY_URL.get(type_url)
    return validator(name) if name is not None and name in NODE_TYPES else None


def validator_for_tag(type_url: str) -> Check | None:
    """The value validator of a tag type URL, or None for a tag geon does not know."""
    name = _BY_URL.get(type_url)
    return validator(name) if name is not None and name in TAG_TYPES else None


@dataclass(frozen=True, slots=True)
class SchemaViolation:
    """One detailed schema error: where (a JSON path suffix such as ``.range.start[0]``) and why."""

    path: str
    message: str
    value: Any


def _path(parts: Any) -> str:
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        elif re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", str(p)):
            out += f".{p}"
        else:
            out += f"['{p}']"
    return out


_JSON_TYPES = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    for py, name in _JSON_TYPES:
        if isinstance(value, py):
            return name
    return type(value).__name__


def _show(value: Any) -> str:
    if type(value) is int:  # an integer of over 4300 digits cannot be printed whole
        return f'"{show_int(value)}"'
    try:
        text = value if isinstance(value, str) else json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return f'"{text[:60]}..."' if len(text) > 60 else f'"{text}"'


def _message(error: Any) -> str:
    """A message in geon's style (the bad value in quotes, then what would be valid)."""
    kind, want, value = error.validator, error.validator_value, error.instance
    if kind == "type":
        wanted = " or ".join(want) if isinstance(want, list) else want
        return f"value {_show(value)} is a {_json_type(value)}; expected {wanted}"
    if kind == "required":
        missing = [k for k in want if isinstance(value, dict) and k not in value]
        return f'field "{missing[0] if missing else want}" is missing; expected it to be present'
    if kind == "maxItems":
        return f"has {len(value)} items; expected at most {want}"
    if kind == "minItems":
        return f"has {len(value)} items; expected at least {want}"
    if kind == "minimum":
        return f"value {_show(value)} is less than {want}; expected at least {want}"
    if kind == "maximum":
        return f"value {_show(value)} is more than {want}; expected at most {want}"
    if kind == "minLength":
        return f"value {_show(value)} is shorter than {want}; expected at least {want} characters"
    if kind == "maxLength":
        return f"value {_show(value)} has {len(value)} characters; expected at most {want}"
    if kind == "maxProperties":
        return f"has {len(value)} fields; expected at most {want}"
    if kind == "pattern":
        if "[0-9a-fA-F]{8}" in str(want):
            return (
                f"value {_show(value)} is not a UUID; expected the form "
                '"xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (hexadecimal)'
            )
        return f"value {_show(value)} does not match the pattern {_show(want)}"
    if kind == "additionalProperties" and isinstance(value, dict):
        known = set(error.schema.get("properties", {}))
        extra = [k for k in value if k not in known]
        return (
            "unexpected field "
            + ", ".join(f'"{k}"' for k in extra)
            + "; expected only ("
            + ", ".join(f'"{k}"' for k in error.schema.get("properties", {}))
            + ")"
        )
    text = str(error.message)
    return text if len(text) <= 200 else text[:197] + "..."


_TOO_LONG_TO_PRINT = (
    f"value holds an integer of over 4300 digits; expected integers from {INT64_MIN} to {INT64_MAX}"
)


def errors_for(name: str, instance: Any) -> list[SchemaViolation]:
    """Every error of ``instance`` against schema ``name``, found by the reference implementation,
    in a stable order (by path, then message)."""
    try:
        found = [
            SchemaViolation(_path(e.absolute_path), _message(e), e.instance)
            for e in _reference_validator(name).iter_errors(instance)
        ]
    except ValueError:  # jsonschema prints the value: an integer of over 4300 digits cannot be
        found = [SchemaViolation("", _TOO_LONG_TO_PRINT, instance)]
    return sorted(found, key=lambda v: (v.path, v.message))


def errors_for_node(type_url: str, body: Any) -> list[SchemaViolation]:
    """Detailed errors of a node body (empty for unknown node types)."""
    name = _BY_URL.get(type_url)
    return errors_for(name, body) if name is not None and name in NODE_TYPES else []


def errors_for_tag(type_url: str, value: Any) -> list[SchemaViolation]:
    """Detailed errors of a tag value (empty for unknown tags)."""
    name = _BY_URL.get(type_url)
    return errors_for(name, value) if name is not None and name in TAG_TYPES else []

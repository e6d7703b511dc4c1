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

from geon.core.graph import NODE_TYPES, TAG_TYPES

__all__ = [
    "SCHEMA_NAMES",
    "SchemaError",
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


class SchemaError(Exception):
    """A schema uses a keyword the compiled validator does not implement (a bug in geon)."""


Check = Callable[[Any], bool]

_TYPES: dict[str, Check] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
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
    "pattern",
    "enum",
    "const",
}


def _resolve(ref: str, base: str) -> dict[str, Any]:
    url = base.split("#")[0] + ref if ref.startswith("#") else ref
    doc_id, _, pointer = url.partition("#")
    node: Any = _by_id()[doc_id]
    for part in filter(None, pointer.split("/")):
        node = node[part]
    if not isinstance(node, dict):
        raise SchemaError(f'"$ref" "{ref}" does not point at a schema')
    return node


def compile_schema(schema: dict[str, Any], base: str = "") -> Check:
    """Compile a schema (the subset geon's schemas use) into a ``value -> bool`` function."""
    base = schema.get("$id", base)
    unknown = set(schema) - _SUPPORTED - _ANNOTATIONS
    if unknown:
        raise SchemaError(f"schema keywords {sorted(unknown)} are not supported by compile_schema")
    checks: list[Check] = []
    if "$ref" in schema:
        target_ref = schema["$ref"]
        cell: list[Check] = []

        def ref_check(v: Any) -> bool:
            if not cell:
                cell.append(compile_schema(_resolve(target_ref, base), target_ref))
            return cell[0](v)

        checks.append(ref_check)
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        tests = [_TYPES[k] for k in kinds]
        if len(tests) == 1:
            checks.append(tests[0])
        else:
            checks.append(lambda v: any(t(v) for t in tests))
    if "enum" in schema:
        allowed = schema["enum"]
        checks.append(lambda v: any(_json_equal(v, a) for a in allowed))
    if "const" in schema:
        const = schema["const"]
        checks.append(lambda v: _json_equal(v, const))
    if "minimum" in schema or "maximum" in schema:
        lo = schema.get("minimum")
        hi = schema.get("maximum")
        number = _TYPES["number"]

        def bounds(v: Any) -> bool:
            if not number(v):
                return True
            return (lo is None or v >= lo) and (hi is None or v <= hi)

        checks.append(bounds)
    if "minLength" in schema:
        n = schema["minLength"]
        checks.append(lambda v: not isinstance(v, str) or len(v) >= n)
    if "pattern" in schema:
        rx = re.compile(schema["pattern"])
        checks.append(lambda v: not isinstance(v, str) or rx.search(v) is not None)
    if "required" in schema:
        req = tuple(schema["required"])
        checks.append(lambda v: not isinstance(v, dict) or all(k in v for k in req))
    if "properties" in schema or "additionalProperties" in schema:
        props = {k: compile_schema(s, base) for k, s in schema.get("properties", {}).items()}
        extra = schema.get("additionalProperties", True)
        extra_check: Check | None
        if extra is True:
            extra_check = None
        elif extra is False:
            extra_check = _never
        else:
            extra_check = compile_schema(extra, base)

        def obj(v: Any) -> bool:
            if not isinstance(v, dict):
                return True
            for k, item in v.items():
                c = props.get(k)
                if c is not None:
                    if not c(item):
                        return False
                elif extra_check is not None and not extra_check(item):
                    return False
            return True

        checks.append(obj)
    if "items" in schema:
        item_check = compile_schema(schema["items"], base)
        checks.append(lambda v: not isinstance(v, list) or all(item_check(i) for i in v))
    if "minItems" in schema or "maxItems" in schema:
        lo_n = schema.get("minItems", 0)
        hi_n = schema.get("maxItems")
        checks.append(
            lambda v: (
                not isinstance(v, list) or (len(v) >= lo_n and (hi_n is None or len(v) <= hi_n))
            )
        )
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]
    return lambda v: all(c(v) for c in checks)


def _always(v: Any) -> bool:
    return True


def _never(v: Any) -> bool:
    return False


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


def errors_for(name: str, instance: Any) -> list[SchemaViolation]:
    """Every error of ``instance`` against schema ``name``, found by the reference implementation,
    in a stable order (by path, then message)."""
    found = [
        SchemaViolation(_path(e.absolute_path), _message(e), e.instance)
        for e in _reference_validator(name).iter_errors(instance)
    ]
    return sorted(found, key=lambda v: (v.path, v.message))


def errors_for_node(type_url: str, body: Any) -> list[SchemaViolation]:
    """Detailed errors of a node body (empty for unknown node types)."""
    name = _BY_URL.get(type_url)
    return errors_for(name, body) if name is not None and name in NODE_TYPES else []


def errors_for_tag(type_url: str, value: Any) -> list[SchemaViolation]:
    """Detailed errors of a tag value (empty for unknown tags)."""
    name = _BY_URL.get(type_url)
    return errors_for(name, value) if name is not None and name in TAG_TYPES else []

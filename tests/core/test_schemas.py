"""The JSON Schemas: valid draft 2020-12, and the fast compiled validator agrees with the
reference implementation (jsonschema) on valid and broken values."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from geon.core import schemas
from geon.core.graph import NODE_TYPES, TAG_TYPES, Graph

IDS = "00000000-0000-4000-8000-000000000001"

VALID: dict[str, Any] = {
    "Tensor": {"dtype": "int32", "range": {"start": [0, 0], "end": [2, 3]}},
    "Operation": {
        "kernel": "op:add",
        "params": {"axes": ["H"]},
        "inputs": {"tensors": [{"tensorId": IDS, "range": {"start": [0], "end": [2]}}]},
        "outputs": {"result": [{"tensorId": IDS, "range": {"start": [0], "end": [2]}}]},
    },
    "Application": {
        "operationId": IDS,
        "inputs": {"x": [{"tensorId": IDS, "range": {"start": [0], "end": [1]}}]},
    },
    "Note": {"message": "hello"},
    "Axis": {
        "name": "H",
        "length": None,
        "roles": ["Height"],
        "cls": None,
        "batch": False,
        "doc": "rows",
    },
    "Mesh": {"name": "pod", "axes": {"x": 2, "y": 4}},
    "IPFSignature": {
        "inputs": {"x": [{"affineMap": {"projection": [[1, 0]], "offset": [0]}, "shape": [1]}]},
        "outputs": {},
    },
    "IPFIndex": {"start": [0, 0], "end": [4, 4]},
    "IOSequencePoint": {},
    "TensorAxes": {"axes": ["H", "W-1"]},
    "IndexAxes": {"axes": ["H"]},
    "Placement": {"mesh": IDS, "coords": [0, 1]},
    "Layout": {"x": 1.5, "y": -3},
    "Variable": {"init": {"kind": "normal", "scale": 0.02}},
}


def reference_ok(name: str, value: Any) -> bool:
    return not list(schemas._reference_validator(name).iter_errors(value))


@pytest.mark.parametrize("name", schemas.SCHEMA_NAMES)
def test_every_schema_is_valid_draft_2020_12(name: str) -> None:
    schema = schemas.load(name)
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == f"urn:geon:2026-11:schemas/{name}.json"


def test_there_is_a_schema_for_every_node_and_tag_type() -> None:
    assert set(NODE_TYPES) | set(TAG_TYPES) <= set(schemas.SCHEMA_NAMES)
    assert set(VALID) == set(NODE_TYPES) | set(TAG_TYPES)


@pytest.mark.parametrize("name", sorted(VALID))
def test_examples_are_valid_for_both_validators(name: str) -> None:
    assert schemas.validator(name)(VALID[name]) is True
    assert reference_ok(name, VALID[name]) is True


def test_the_loom_example_validates_as_a_document(loom_doc: dict[str, Any]) -> None:
    assert schemas.validator("graph")(loom_doc) is True
    assert reference_ok("graph", loom_doc) is True
    assert Graph.from_json(loom_doc).check() == []


# -- mutations: the compiled validator must agree with jsonschema -----------------------------

ODD_VALUES = st.sampled_from(
    [
        None,
        True,
        False,
        0,
        -1,
        1.5,
        2.0,
        "",
        "x",
        "H",
        IDS,
        [],
        [1],
        [True],
        {},
        {"a": 1},
        [[1, 0]],
        10**20,
        -(10**20),
        1e300,
        2**63 - 1,
        2**63,
        -(2**63),
        -(2**63) - 1,
        "H" * 1025,
        "H" * 129,
        {f"m{i}": 1 for i in range(17)},
        {"x": 65537},
    ]
)


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, Any]:
    name = draw(st.sampled_from(sorted(VALID)))
    value = copy.deepcopy(VALID[name])
    for _ in range(draw(st.integers(1, 3))):
        # walk to a random container and replace, delete or add one entry
        parent: Any = None
        key: Any = None
        here: Any = value
        while isinstance(here, (dict, list)) and here and draw(st.booleans()):
            parent = here
            key = draw(
                st.sampled_from(sorted(here) if isinstance(here, dict) else list(range(len(here))))
            )
            here = here[key]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        odd = copy.deepcopy(draw(ODD_VALUES))
        if parent is None:
            if isinstance(value, dict) and action == "add":
                value[draw(st.sampled_from(["zz", "start", "axes", "kernel"]))] = odd
            elif action == "replace":
                value = odd
            continue
        if action == "replace":
            parent[key] = odd
        elif action == "delete":
            del parent[key]
        elif isinstance(parent, dict):
            parent[draw(st.sampled_from(["zz", "start", "extra"]))] = odd
        else:
            parent.append(odd)
    return name, value


@settings(max_examples=600, deadline=None)  # correctness, not timing: the machine is shared
@given(mutated())
def test_compiled_validator_agrees_with_jsonschema(case: tuple[str, Any]) -> None:
    name, value = case
    assert schemas.validator(name)(value) is reference_ok(name, value), json.dumps(value)


def test_compiled_validator_accepts_integral_floats_and_rejects_booleans() -> None:
    ok = schemas.validator("IPFIndex")
    assert ok({"start": [0.0], "end": [2.0]}) is True
    assert ok({"start": [True], "end": [2]}) is False
    assert reference_ok("IPFIndex", {"start": [True], "end": [2]}) is False


@pytest.mark.parametrize(
    ("name", "value", "messages"),
    [
        (
            "Tensor",
            {"range": {"start": [0], "end": [1]}},
            [("", 'field "dtype" is missing; expected it to be present')],
        ),
        (
            "Tensor",
            {"dtype": 3, "range": {"start": [0], "end": [1]}},
            [(".dtype", 'value "3" is a integer; expected string')],
        ),
        (
            "Application",
            {"operationId": "op-1"},
            [
                (
                    ".operationId",
                    'value "op-1" is not a UUID; expected the form '
                    '"xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (hexadecimal)',
                )
            ],
        ),
        (
            "IPFIndex",
            {"start": [0] * 65, "end": [0] * 65},
            [
                (".end", "has 65 items; expected at most 64"),
                (".start", "has 65 items; expected at most 64"),
            ],
        ),
        (
            "Placement",
            {"mesh": IDS, "coords": [-1], "extra": 1},
            [
                ("", 'unexpected field "extra"; expected only ("mesh", "coords")'),
                (".coords[0]", 'value "-1" is less than 0; expected at least 0'),
            ],
        ),
        (
            "Operation",
            {"kernel": ""},
            [(".kernel", 'value "" is shorter than 1; expected at least 1 characters')],
        ),
        (
            "Tensor",
            {"dtype": "int8", "range": {"start": [-(2**63) - 1], "end": [10**4000]}},
            [
                (
                    ".range.end[0]",
                    'value "1000000000000... (4001 digits)" is more than 9223372036854775807; '
                    "expected at most 9223372036854775807",
                ),
                (
                    ".range.start[0]",
                    'value "-9223372036854775809" is less than -9223372036854775808; expected '
                    "at least -9223372036854775808",
                ),
            ],
        ),
        (
            "TensorAxes",
            {"axes": ["A" + " " * 40000 + "!"]},
            [
                (
                    ".axes[0]",
                    f'value "A{" " * 59}..." has 40002 characters; expected at most 1024',
                )
            ],
        ),
        (
            "Axis",
            {"name": "A" * 129, "length": 2**63},
            [
                (
                    ".length",
                    'value "9223372036854775808" is more than 9223372036854775807; expected at '
                    "most 9223372036854775807",
                ),
                (".name", f'value "{"A" * 60}..." has 129 characters; expected at most 128'),
            ],
        ),
        (
            "Mesh",
            {"name": "m", "axes": {f"m{i}": 2 for i in range(17)}},
            [(".axes", "has 17 fields; expected at most 16")],
        ),
        (
            "Mesh",
            {"name": "m", "axes": {"x": 10**12}},
            [(".axes.x", 'value "1000000000000" is more than 65536; expected at most 65536')],
        ),
    ],
    ids=[
        "required",
        "type",
        "uuid",
        "max-items",
        "closed-and-minimum",
        "min-length",
        "int64",
        "reference-length",
        "axis-name-and-length",
        "mesh-axes",
        "mesh-size",
    ],
)
def test_detailed_errors_name_the_value(
    name: str, value: Any, messages: list[tuple[str, str]]
) -> None:
    assert [(e.path, e.message) for e in schemas.errors_for(name, value)] == messages


def test_unsupported_keywords_are_refused_when_compiling() -> None:
    with pytest.raises(schemas.SchemaError) as info:
        schemas.compile_schema({"type": "object", "patternProperties": {}})
    assert str(info.value) == (
        "schema keywords ['patternProperties'] are not supported by compile_schema"
    )


def test_unknown_schema_name() -> None:
    with pytest.raises(KeyError) as info:
        schemas.load("Nope")
    assert 'schema "Nope" does not exist' in str(info.value)


def test_the_schemas_bounds_are_the_limits_of_the_core() -> None:
    # the JSON files cannot import Python: this keeps their numbers equal to geon.core.limits
    from geon.core import limits

    defs = schemas.load("common")["$defs"]
    for vector in ("intVector", "sizeVector", "shapeVector"):
        assert defs[vector]["items"]["maximum"] == limits.INT64_MAX
    assert defs["intVector"]["items"]["minimum"] == limits.INT64_MIN
    assert defs["axisName"]["maxLength"] == limits.MAX_AXIS_NAME_LENGTH
    assert defs["axisRef"]["maxLength"] == limits.MAX_AXIS_REF_LENGTH
    length = schemas.load("Axis")["properties"]["length"]
    assert (length["minimum"], length["maximum"]) == (limits.INT64_MIN, limits.INT64_MAX)
    mesh = schemas.load("Mesh")["properties"]["axes"]
    assert mesh["maxProperties"] == limits.MAX_MESH_AXES
    assert mesh["additionalProperties"]["maximum"] == limits.MAX_MESH_DEVICES


def _integer_schemas(node: Any, path: str) -> list[str]:
    """The paths of the schemas that accept integers and carry no maximum."""
    found = []
    if isinstance(node, dict):
        kinds = node.get("type")
        kinds = kinds if isinstance(kinds, list) else [kinds]
        if "integer" in kinds and "maximum" not in node:
            found.append(path)
        for key, sub in node.items():
            found += _integer_schemas(sub, f"{path}/{key}")
    elif isinstance(node, list):
        for i, sub in enumerate(node):
            found += _integer_schemas(sub, f"{path}/{i}")
    return found


def test_every_integer_in_every_schema_is_bounded() -> None:
    assert [p for n in schemas.SCHEMA_NAMES for p in _integer_schemas(schemas.load(n), n)] == []


def test_an_integer_too_long_to_print_is_reported_not_raised() -> None:
    # Python refuses to print integers of over 4300 digits (json.loads refuses to read them),
    # and jsonschema prints the value it reports: a document built in Python still gets an answer
    value = {"dtype": "int8", "range": {"start": [0], "end": [10**5000]}}
    assert schemas.validator("Tensor")(value) is False
    [violation] = schemas.errors_for("Tensor", value)
    assert (violation.path, violation.message) == (
        "",
        "value holds an integer of over 4300 digits; expected integers from "
        "-9223372036854775808 to 9223372036854775807",
    )

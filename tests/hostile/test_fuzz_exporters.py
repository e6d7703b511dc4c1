"""Fuzzing every exporter (issue 30, finding 1): whatever text a document holds in its labels,
axis names, axis descriptions and classes — control characters, quotes, a docstring's end, the
finding's ``\\r``-then-code — the NumPy script, the builder code and the einsum lines parse with
:mod:`ast`, hold no line break but ``\\n``, and call only what the graph's kernels ask for (an
allow-list per kernel, over the script's fixed part); the ONNX model passes ONNX's checker and
holds only the node types those kernels export as. An axis name or reference that does not
parse is refused with one line naming it, never written.

A stored document with values of the wrong kind anywhere in its nodes (as one stored before the
server read documents strictly may hold) is exported or refused with an ``ExportError`` (the
REST export's 400), never another exception (a 500).

Bounded: 150 examples each of one eight-node graph (dot, add, tanh, softmax, sum over three
fuzzed axes), the same ones every run (derandomized); the file runs in about ten seconds.
"""

from __future__ import annotations

import ast
import copy
import re
from typing import Any

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from geon import core as gc
from geon.core.errors import GeonError
from geon.core.graph import AXIS, TENSOR_AXES, Graph
from geon.core.nodes import UNSAFE_CHARACTERS
from geon.interop.export import export
from geon.interop.program import ExportError, read

PAYLOAD = "F\r    __import__('os').system('touch pwned')\r    #"
#: Text that has broken (or could break) a writer of code: line ends, quotes, escapes, braces.
NASTY = ["", PAYLOAD, '"""', "'''", "'", '"', "\\", "\\u2028", "\r", "\n#", "\u2028", "\u2029",
         "\x00", "\x85", "{x}", "}", "#", "__import__('os')", "\ud7ff", "é"]  # fmt: skip
TEXT = st.one_of(
    st.sampled_from(NASTY),
    st.text(st.characters(codec="utf-8"), max_size=20),
    st.lists(st.sampled_from(NASTY), max_size=4).map("".join),
)
NAME = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True)

#: What each kernel's export may call, besides the script's fixed part (an export of no nodes).
#: ``T.`` is a method of a tensor variable.
NUMPY_CALLS = {
    "op:dot": {"np.einsum"},
    "op:add": {"np.add", "np.asarray", "align"},
    "op:tanh": {"np.tanh"},
    "op:softmax": {"np.exp", "T.max", "T.sum"},
    "op:sum": {"np.sum", "align"},
}
PYTHON_CALLS = {"gc.Axis", "gc.placeholder", "gc.constant", "np.asarray", "R", "make_op", "list",
                "AX.values"}  # fmt: skip
ONNX_OPS = {
    "op:dot": {"Einsum"},
    "op:add": {"Add", "Transpose", "Reshape", "Identity"},
    "op:tanh": {"Tanh"},
    "op:softmax": {"ReduceMax", "Sub", "Exp", "ReduceSum", "Div"},
    "op:sum": {"ReduceSum", "Transpose", "Reshape", "Identity"},
}


def template(a: str, b: str, c: str) -> dict[str, Any]:
    """``o = sum_a(softmax_c(tanh(x[a, b] · y[b+1, c] + w[c])))``, ``w`` a constant with a NaN."""
    A, B, C = gc.Axis(a, 2), gc.Axis(b, 3), gc.Axis(c, 4)
    x = gc.placeholder(axes=[A, B], name="x")
    y = gc.placeholder(axes=[B + 1, C], name="y")
    w = gc.constant(np.array([0.5, np.nan, -1.0, 2.0]), axes=[C], name="w")
    h = gc.tanh(gc.add(gc.dot(x, y, name="z"), w, name="h"), name="t")
    out = gc.sum(gc.softmax(h, reduction_axes=[C], name="s"), reduction_axes=[A], name="o")
    doc: dict[str, Any] = gc.graph([out]).to_json()
    return doc


@st.composite
def documents(draw: Any) -> tuple[dict[str, Any], str | None]:
    """A document with fuzzed labels, descriptions and classes, and maybe one raw axis name or
    reference; with the raw text written in, or None when there is none."""
    a, b, c = draw(st.lists(NAME, min_size=3, max_size=3, unique=True))
    doc = template(a, b, c)
    for node in doc["nodes"]:
        node["label"] = draw(st.one_of(st.none(), TEXT, st.sampled_from(["x", "model", "np"])))
        if node["type"] == AXIS:
            node["body"]["doc"] = draw(TEXT)
            if draw(st.booleans()):
                node["body"]["cls"] = draw(TEXT)
    raw = draw(st.one_of(st.none(), TEXT, NAME.map(lambda n: f" {n} ")))
    if raw is not None:
        if draw(st.booleans()):  # the axis renamed raw, with every reference (as update_node did)
            for node in doc["nodes"]:
                if node["type"] == AXIS and node["body"]["name"] == b:
                    node["body"]["name"] = raw
                axes = node.get("tags", {}).get(TENSOR_AXES, {}).get("axes")
                if axes:
                    node["tags"][TENSOR_AXES]["axes"] = [
                        raw + r[len(b) :] if r.split("+")[0] == b else r for r in axes
                    ]
        else:  # one reference written raw
            tensor = next(n for n in doc["nodes"] if TENSOR_AXES in n.get("tags", {}))
            tensor["tags"][TENSOR_AXES]["axes"][0] = raw
    return doc, raw


def call_names(source: str, variables: set[str]) -> list[str]:
    """Every call in ``source`` as written, a tensor variable's method as ``T.method``."""
    found = []
    for n in ast.walk(ast.parse(source)):
        if isinstance(n, ast.Call):
            name = ast.unparse(n.func)
            root = name.split(".")[0]
            found.append("T" + name[len(root) :] if root in variables else name)
    return found


EMPTY = Graph([], id="00000000-0000-4000-8000-000000000000")


def check_text(to: str, text: str, graph: Graph, consistent: bool) -> None:
    assert not UNSAFE_CHARACTERS.search(text.replace("\n", "")), (to, text)
    program = read(graph)
    kernels = {op.kernel for op in program.ops}
    variables = {t.var for t in program.tensors.values()}
    fixed = set(call_names(export(EMPTY, to), variables))
    found = set(call_names(text, variables)) - fixed
    if to == "numpy":
        allowed = {"np.asarray"}.union(*(NUMPY_CALLS[k] for k in kernels))
    elif to == "python":
        allowed = PYTHON_CALLS
        made = [
            n.args[0]
            for n in ast.walk(ast.parse(text))
            if isinstance(n, ast.Call) and ast.unparse(n.func) == "make_op"
        ]
        assert all(isinstance(k, ast.Constant) and k.value in kernels for k in made), to
    else:
        allowed = {"einsum"}
    assert found <= allowed, (to, found - allowed)
    if to == "numpy" and consistent:  # the script computes, leaves and outputs keyed by label
        namespace: dict[str, Any] = {"__name__": "exported"}
        exec(compile(text, "exported.py", "exec"), namespace)
        rng = np.random.default_rng(0)
        inputs = {t.key: rng.random(t.shape) for t in program.leaves if t.value is None}
        outputs = namespace["model"](inputs)
        assert sorted(outputs) == sorted(t.key for t in program.outputs)


def check_onnx(model: Any, graph: Graph, consistent: bool) -> None:
    onnx.checker.check_model(model, full_check=consistent)
    kernels = {op.kernel for op in read(graph).ops}
    assert {n.op_type for n in model.graph.node} <= set().union(*(ONNX_OPS[k] for k in kernels))


@settings(
    max_examples=150,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(documents())
def test_every_exporter_writes_document_text_as_data(
    case: tuple[dict[str, Any], str | None],
) -> None:
    doc, raw = case
    graph = Graph.from_json(doc)
    for to in ("numpy", "python", "einsum", "onnx"):
        try:
            result = export(graph, to)
        except ExportError as error:
            # only a raw axis name or reference is refused, in one line naming it escaped
            message = str(error)
            assert raw is not None, (to, message)
            assert not UNSAFE_CHARACTERS.search(message), message
            assert re.match(r'^(axis|tensor) "', message), message
            continue
        if to == "onnx":
            check_onnx(result, graph, consistent=raw is None)
        else:
            check_text(to, result, graph, consistent=raw is None)


@pytest.mark.parametrize("to", ["numpy", "python", "einsum", "onnx"])
def test_the_findings_axis_name_is_refused_by_every_exporter(to: str) -> None:
    doc = template("H", "W", "N")
    for node in doc["nodes"]:
        if node["type"] == AXIS and node["body"]["name"] == "W":
            node["body"]["name"] = PAYLOAD
    with pytest.raises(ExportError) as refused:
        export(Graph.from_json(doc), to)
    assert str(refused.value).startswith(
        "axis \"F\\r    __import__('os').system('touch pwned')\\r    #\" has a name that is not one"
    )


#: Values a stored document may hold where the exporters expect something else.
JUNK = [None, 0, -1, True, 1.5, "", "x", " A ", "A\rB", PAYLOAD, [], [1], ["A"], [["A"]], {},
        {"a": 1}, {"start": "a"}, [None]]  # fmt: skip


def places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into ``value`` below a node's own fields (body, tags and what they hold)."""
    found = [path] if len(path) > 2 else []
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        items = ()
    for key, item in items:
        found += places(item, (*path, key))
    return found


@st.composite
def malformed_documents(draw: Any) -> dict[str, Any]:
    """The template with one to three values replaced by junk or deleted, as a document stored
    before the server read it strictly might hold."""
    doc = template("A", "B", "C")
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(places(doc)))
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        if isinstance(parent, dict) and draw(st.booleans()):
            del parent[path[-1]]
        else:
            parent[path[-1]] = copy.deepcopy(draw(st.sampled_from(JUNK)))
    return doc


@settings(max_examples=150, derandomize=True, deadline=None)
@given(malformed_documents())
def test_a_malformed_stored_document_is_exported_or_refused_never_a_crash(
    doc: dict[str, Any],
) -> None:
    try:
        graph = Graph.from_json(doc)
    except GeonError:
        return  # not loaded at all: the server never held it
    for to in ("numpy", "python", "einsum", "onnx"):
        try:
            result = export(graph, to)
        except ExportError as error:  # the service's 400, one line
            assert not UNSAFE_CHARACTERS.search(str(error)), str(error)
            continue
        if to != "onnx":
            ast.parse(result)
            assert not UNSAFE_CHARACTERS.search(result.replace("\n", "")), (to, result)

"""An import's review reads its axes without building the document (issue 35 follow-up):
:func:`geon.interop.onnx_import.review_onnx` stops once the axes' roles are read, and lists
exactly the axes :func:`~geon.interop.onnx_import.import_onnx` declares. The oracle is the built
document: every committed model, and the ONNX backend's node cases whose inputs are shapes,
axes, indices or split sizes (the values that are no tensor of the document)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import onnx
import pytest

from geon.interop import onnx_bounded
from geon.interop.onnx_import import OnnxImportError, _Importer, import_onnx, review_onnx

MODELS = Path(__file__).parent / "models"
BOUNDS = {"max_bytes": 10**8, "bound": "the test's bound", "seconds": 60, "memory": 2**31}


def _never_built(monkeypatch: pytest.MonkeyPatch) -> None:
    def build(self: Any) -> Any:
        raise AssertionError("the review built the document")

    monkeypatch.setattr(_Importer, "build", build)


@pytest.mark.parametrize(
    ("model", "dims"), [("encoder", {"batch": 2}), ("mlp", {"batch": 2}), ("cnn", {"batch": 2})]
)
def test_the_review_lists_the_axes_of_the_built_document_without_building_it(
    model: str, dims: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a committed model and the axes its imported document declares (the oracle)
    built = import_onnx(MODELS / f"{model}.onnx", dims=dims)
    labels = {n.label for n in built.graph.nodes if n.type.endswith("/Axis")}
    # when its axes are reviewed with the document's build refused
    _never_built(monkeypatch)
    axes = review_onnx(MODELS / f"{model}.onnx", dims)
    # then they are the document's, with the same roles and proposals
    assert [p.to_json() for p in axes] == [p.to_json() for p in built.axes]
    assert {p.name for p in axes} == labels


def _argument_cases() -> list[Any]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from onnx_cases import supported_cases

    words = ("split", "reshape", "squeeze", "gather", "reduce_sum_", "unsqueeze")
    return [c for c in supported_cases() if any(w in c.name for w in words)]


CASES = _argument_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_review_skips_what_the_nodes_read_as_shapes_axes_or_split_sizes(case: Any) -> None:
    # given an ONNX node case whose second input is an argument (benchmarks/onnx_cases.py)
    from onnx_cases import arguments

    names = [vi.name for vi in case.model.graph.input]
    feeds = dict(zip(names, case.data_sets[0][0], strict=False))
    known = {k: v for k, v in feeds.items() if k in arguments(case)}
    if known:  # a graph input the case feeds: made a constant, as an exported model holds it
        case.model.graph.initializer.extend(
            onnx.numpy_helper.from_array(v, k) for k, v in known.items()
        )
    # when it is imported and reviewed
    try:
        built = import_onnx(case.model)
    except OnnxImportError as refusal:  # then a model the import refuses, the review refuses
        with pytest.raises(OnnxImportError) as reviewed:
            review_onnx(case.model)
        assert str(reviewed.value) == str(refusal)
        return
    axes = review_onnx(case.model)
    # then the review lists the axes of the document, no more (no length-1 axis of a split size)
    assert [p.to_json() for p in axes] == [p.to_json() for p in built.axes]


def test_the_bounded_child_answers_the_review_with_no_document_or_weights(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # given the encoder's upload, and the child's conversion with the build refused
    data = (MODELS / "encoder.onnx").read_bytes()
    model = onnx.load_model_from_string(data)
    request = {"name": "encoder.onnx", "dims": {"batch": 2}, "max_bytes": 10**8,
               "bound": "the test's bound", "review": True}  # fmt: skip
    full = onnx_bounded.import_in_child(data, "encoder.onnx", {"batch": 2}, **BOUNDS)
    _never_built(monkeypatch)
    # when the child converts a review's request
    header, body = onnx_bounded._convert(request, model)
    # then it answers the axes alone, those the full conversion answers
    assert (header["status"], body) == ("ok", b"")
    assert header["axes"] == full[2]
    # and the bounded child's review (a process of its own) answers the same
    axes = onnx_bounded.review_in_child(data, "encoder.onnx", {"batch": 2}, **BOUNDS)
    assert axes == full[2]

"""The axis names a model import in review takes (issue 35), held to shared cases:
``tests/interop/import_name_cases.json`` is run here on the server's check
(:func:`geon.interop.onnx_roles.check_names`, what ``POST /api/v1/imports/<id>/names`` runs) and
by ``frontend/src/gallery/importReview.test.ts`` on the rename table's ``namesProblem``, so the
table refuses exactly what the server refuses, in its words (the too-long rule, a clash with a
hidden length-1 axis, the ``the name for axis "d4": `` prefix)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from geon.interop.onnx_roles import AxisProposal, NamesError, check_names

TABLE = json.loads((Path(__file__).parent / "import_name_cases.json").read_text(encoding="utf-8"))
AXES = [
    AxisProposal(name, length, role, proposed, "") for name, length, role, proposed in TABLE["axes"]
]


@pytest.mark.parametrize("case", TABLE["cases"], ids=[c["label"] for c in TABLE["cases"]])
def test_the_server_takes_or_refuses_the_names_as_the_case_says(case: dict[str, Any]) -> None:
    # given the import's axes and the names the table posts
    # when the server checks them
    try:
        final = check_names(AXES, case["names"])
        message = ""
    except NamesError as error:
        message = str(error)
    # then it refuses in the case's words, or takes them (hidden axes keep their proposals)
    assert message == case["message"]
    if not message:
        assert final == {p.name: case["names"].get(p.name, p.proposed) for p in AXES}


def test_the_cases_cover_every_rule_of_an_axis_name() -> None:
    # the table must not drift into testing only what the TS already did
    words = " ".join(c["message"] for c in TABLE["cases"])
    for rule in ("is invalid", "is too long", "is given to axes", 'and "d1_44"'):
        assert rule in words, rule

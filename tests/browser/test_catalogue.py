"""The editor's copy of the kernel catalogue is the server's (the palette and the client-side
axis inference read it; ``frontend/src/model/catalogue.json``)."""

from __future__ import annotations

import json
from pathlib import Path

from geon.core.ops import catalogue_json

COPY = Path(__file__).resolve().parents[2] / "frontend" / "src" / "model" / "catalogue.json"


def test_the_editor_catalogue_is_the_server_catalogue() -> None:
    # given the catalogue the server publishes
    served = catalogue_json()
    # when the editor's copy is read
    copy = json.loads(COPY.read_text(encoding="utf-8"))
    # then they are equal, entry for entry (regenerate the copy from catalogue_json() if not)
    assert copy == served

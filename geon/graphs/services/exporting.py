"""A graph's document exported as a file (issue #20): ONNX, a NumPy script, einsum strings or
geon builder code, by :mod:`geon.interop`, for ``GET /api/v1/graphs/<id>/export?to=...``.

The export is made in the request, so it is bounded first: a document over the size the REST
API accepts for one (``GEON_MAX_REQUEST_BYTES`` of JSON) is refused before it is read, and the
exporters run in time linear in the document. File names follow the graph's title and what the
CLI's ``-o`` is given in the tests and README: ``<title>.onnx``, ``<title>_numpy.py``,
``<title>_einsum.txt``, ``<title>_geon.py``.

A placed document exports its logical model (:func:`geon.interop.export.export_logical`, issue
35): the answer then carries :data:`NOTICE_HEADER` saying so ("exported the logical model; the
plan's placement is not part of ONNX (...)"), which the editor's Export menu shows.

>>> export_name("My MLP", "numpy")
'my_mlp_numpy.py'
"""

from __future__ import annotations

import re
from typing import Any

from geon.core.errors import GeonError
from geon.core.graph import Graph as Document
from geon.execute.limits import format_bytes
from geon.graphs.services.documents import over_request_size

#: Each format: the file name's ending and the content type.
EXPORTS: dict[str, tuple[str, str]] = {
    "onnx": (".onnx", "application/octet-stream"),
    "numpy": ("_numpy.py", "text/x-python; charset=utf-8"),
    "einsum": ("_einsum.txt", "text/plain; charset=utf-8"),
    "python": ("_geon.py", "text/x-python; charset=utf-8"),
}
#: The formats ``to`` takes: LoomGraph JSON (the default) and :data:`EXPORTS`.
FORMATS = ("json", *EXPORTS)
#: The answer's header that says what an export left out (a placed document's plan).
NOTICE_HEADER = "X-Geon-Export-Notice"


class ExportRefused(GeonError):
    """An export is refused: ``code`` says why, ``status`` is the HTTP status (400 an unknown
    format or a document the exporter refuses, 413 a document over the size limit)."""

    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code = code
        self.status = status


def check_format(to: Any) -> str:
    """``to`` if it is one of :data:`FORMATS`, else :class:`ExportRefused` naming them."""
    if to not in FORMATS:
        expected = ", ".join(f'"{f}"' for f in FORMATS)
        raise ExportRefused(
            "unknown_format",
            f'export format "{str(to)[:40]}" is unknown; expected one of {expected}',
        )
    return str(to)


def export_name(title: str, to: str) -> str:
    """The file name of an export: the title as an identifier, then the format's ending."""
    base = re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_")[:80] or "graph"
    return base + EXPORTS[to][0]


def export_file(document: Document, title: str, to: str) -> tuple[bytes, str, str, str | None]:
    """The export of ``document`` as ``to`` (one of :data:`EXPORTS`): its bytes, file name,
    content type and notice (what of a plan the file leaves out, None for a document no plan
    placed); :class:`ExportRefused` with the exporter's message when it refuses."""
    from geon.interop.export import export_logical

    over = over_request_size(document.to_json())
    if over is not None:
        size, limit = over
        raise ExportRefused(
            "too_large",
            f"the graph is {format_bytes(size)} of JSON; at most {format_bytes(limit)} is "
            "exported (GEON_MAX_REQUEST_BYTES)",
            status=413,
        )
    try:
        result, notice = export_logical(document, to)
    except GeonError as error:
        raise ExportRefused("cannot_export", str(error)) from None
    if to == "onnx":
        content = bytes(result.SerializeToString())
    else:
        content = (result if result.endswith("\n") else result + "\n").encode("utf-8")
    return content, export_name(title, to), EXPORTS[to][1], notice

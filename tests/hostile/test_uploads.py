"""Issue 13, finding 3: ``.npz`` inflation. A 1 MiB ``savez_compressed`` of ``zeros(2**30,
uint8)`` as run inputs grew the web process by 1 GB before the refusal. Each member's header is
now checked against the graph's inputs before any data is read: the refusal costs a bounded
amount of memory (tracemalloc's peak around the request), and nothing is stored."""

from __future__ import annotations

import io
import tracemalloc
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from geon.execute.limits import format_bytes
from geon.runs.models import Run

#: What a refusal may allocate, all told (the upload is 1 MiB; the arrays would be 1 GiB).
MEMORY_BOUND = 16 * 2**20
CHUNK = 2**20


def inflating_npz(key: str, header_shape: tuple[int, ...], dtype: Any, data_bytes: int) -> bytes:
    """A compressed ``.npz`` member ``key.npy`` with a header for ``header_shape`` and
    ``data_bytes`` zero bytes of data, streamed (never whole in memory). With a header that
    matches the data this is what ``numpy.savez_compressed`` writes."""
    buffer = io.BytesIO()
    with (
        zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive,
        archive.open(f"{key}.npy", "w", force_zip64=True) as member,
    ):
        header = {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)),
                  "fortran_order": False, "shape": header_shape}  # fmt: skip
        np.lib.format.write_array_header_1_0(member, header)
        zeros = bytes(CHUNK)
        for start in range(0, data_bytes, CHUNK):
            member.write(zeros[: min(CHUNK, data_bytes - start)])
    return buffer.getvalue()


def run_files() -> list[Path]:
    root = Path(settings.DATA_DIR) / "files" / "runs"
    return sorted(p for p in root.rglob("*") if p.is_file())


def post_measured(client: Client, url: str, content: bytes) -> tuple[Any, int]:
    """POST ``content`` as the inputs file; the answer and the peak bytes allocated meanwhile."""
    # the same path once first, so that the modules it imports are not counted
    client.post(url, {"inputs": SimpleUploadedFile("warm.npz", b"not a zip")})
    upload = SimpleUploadedFile("in.npz", content, content_type="application/octet-stream")
    tracemalloc.start()
    try:
        response = client.post(url, {"inputs": upload})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return response, peak


@pytest.fixture(scope="module")
def finding() -> bytes:
    """The finding's upload: ``savez_compressed(zeros(2**30, uint8))`` under an input's name."""
    return inflating_npz("x", (2**30,), np.uint8, 2**30)


@pytest.fixture
def wide_graph(user: Any) -> Any:
    """ann's graph whose one input ``x`` is 2**17 float64 values (1 MiB): uploads of about a
    megabyte fit under its cap, so what refuses the finding's upload is the header check."""
    from geon import core as gc
    from geon.graphs.services import do_create_graph

    x = gc.placeholder(axes=[gc.Axis("N", 2**17)], name="x")
    document = gc.graph([gc.exp(x)]).to_json()
    return do_create_graph(owner=user, title="Wide", document=document)


@pytest.mark.django_db
def test_the_finding_is_refused_from_the_header_with_bounded_memory(
    client: Client, user: Any, wide_graph: Any, finding: bytes
) -> None:
    assert len(finding) < 2**21  # the upload itself is small: ~1 MiB packed
    client.force_login(user)
    before = run_files()
    response, peak = post_measured(client, f"/api/v1/graphs/{wide_graph.pk}/runs", finding)
    assert (response.status_code, response.json()) == error(
        422, "invalid_inputs",
        'inputs file "in.npz": input for tensor "x" has shape (1073741824,); expected (131072,)',
    )  # fmt: skip
    assert peak < MEMORY_BOUND, f"the refusal allocated {peak} bytes"
    assert (Run.objects.count(), run_files()) == (0, before)


@pytest.mark.django_db
def test_a_header_that_fits_over_more_data_is_refused_with_bounded_memory(
    client: Client, user: Any, wide_graph: Any
) -> None:
    # the header says 1 MiB of float64, the member inflates to 64 MiB
    content = inflating_npz("x", (2**17,), np.float64, 64 * 2**20)
    client.force_login(user)
    before = run_files()
    response, peak = post_measured(client, f"/api/v1/graphs/{wide_graph.pk}/runs", content)
    assert (response.status_code, response.json()) == error(
        400, "invalid_npz",
        'inputs file "in.npz": array "x" has a header for shape (131072,) and dtype float64 '
        "(1048704 bytes), but the archive says it holds 67108992 bytes; expected an array "
        "written by numpy.save",
    )  # fmt: skip
    assert peak < MEMORY_BOUND, f"the refusal allocated {peak} bytes"
    assert (Run.objects.count(), run_files()) == (0, before)


@pytest.mark.django_db
def test_the_finding_against_small_inputs_is_refused_before_it_is_opened(
    client: Client, user: Any, graph: Any, finding: bytes
) -> None:
    # the loom graph's inputs are two 10 x 5 int32 tensors: a megabyte cannot be what they need
    client.force_login(user)
    response, peak = post_measured(client, f"/api/v1/graphs/{graph.pk}/runs", finding)
    assert (response.status_code, response.json()) == error(
        413, "inputs_too_large",
        f'inputs file "in.npz" has {format_bytes(len(finding))}; the graph\'s inputs need at '
        "most 73.6 KiB (their elements at 16 bytes each)",
    )  # fmt: skip
    assert peak < MEMORY_BOUND, f"the refusal allocated {peak} bytes"
    assert Run.objects.count() == 0


def error(status: int, code: str, message: str) -> tuple[int, dict[str, Any]]:
    return status, {"error": {"code": code, "message": message}}


@pytest.mark.django_db(transaction=True)
def test_a_form_of_only_its_closing_boundary_is_geons_to_answer_through_daphne(
    daphne_server: str, user: Any, graph: Any
) -> None:
    """Twisted, under Daphne, parsed every multipart body before Django did (a second copy of
    each upload) and answered a malformed one with an empty 400 of its own; geon's Daphne leaves
    form bodies to Django (geon/cli/daphne_main.py). Found by tests/web/test_api_fuzz.py."""
    import urllib.error
    import urllib.request

    from geon.accounts.models import ApiToken

    _, token = ApiToken.issue(user, "forms")
    url = f"{daphne_server}/api/v1/graphs/{graph.pk}/runs"
    headers = {"Authorization": f"Bearer {token}"}
    # given a form of only its closing boundary, and one whose part never ends
    bare = b"--b1--\r\n"
    broken = b'--b1\r\nContent-Disposition: form-data; name="seed"\r\n\r\n1'
    answers = []
    for body in (bare, broken):
        request = urllib.request.Request(
            url, body, {**headers, "Content-Type": "multipart/form-data; boundary=b1"}
        )
        # when each is posted to the runs of a graph
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                answers.append((answer.status, answer.headers["Content-Type"]))
        except urllib.error.HTTPError as error:
            answers.append((error.code, error.headers["Content-Type"]))
    # then geon answers both in JSON: an empty form is a run with the defaults, a form whose
    # part never ends has no fields (Django's parser reads what is there)
    assert answers == [(202, "application/json"), (202, "application/json")]
    assert Run.objects.count() == 2

"""An ONNX import in a child process with a memory, CPU and wall-clock bound (issue 30).

The worker converts uploads that anyone may have written, so :func:`import_in_child` runs
:func:`geon.interop.onnx_import.import_onnx` in ``python -m geon.interop.onnx_bounded``:

- **an empty working folder** (a fresh temporary folder, removed afterwards): nothing the model
  names can resolve against the worker's files (external data is refused anyway, before
  anything is read: :func:`geon.interop.onnx_gate.refuse_external`);
- **memory**: ``RLIMIT_AS`` (the child's whole address space, which is what a Python process's
  allocations grow) set to ``memory`` bytes once its modules are loaded and the model is parsed
  (the parse is as large as the upload, bounded by ``GEON_IMPORT_MAX_BYTES``); an allocation
  past it raises ``MemoryError`` in the child, whose parent reports the bound. A limit of the
  child alone, not of the worker: the worker's other tasks keep their memory. (``RLIMIT_AS``
  rather than cgroups: it needs no privileges or container setup, and the child's baseline is
  small, ~170 MiB of address space with NumPy, onnx and geon loaded, one BLAS thread);
- **time**: the parent kills the child (its whole process group) after ``seconds`` of wall
  clock; ``RLIMIT_CPU`` of ``seconds + 1`` stops a child whose parent died first;
- **threads**: BLAS and OpenMP get one thread each, so an import takes one core.

The request and the answer travel through the child's stdin and stdout (a length-prefixed JSON
header, then the bytes): the model and the axes' ``names`` in; the document's JSON, the
weights' ``.npz`` and the axes' roles and proposed names (in the header, issue 35) out. A
document over ``max_bytes`` is not sent back (the answer says how large it was). An import's
review (:func:`review_in_child`) asks for the axes alone: the child stops once their roles are
read, building neither the document nor the weights, under the same bounds.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from typing import Any

from geon.interop.onnx_common import OnnxImportError

#: The length a ``dim_param`` gets when the request binds none (2, not 1: a length-1 dim would
#: be taken for a broadcast one and lose its identity through reshapes).
DEFAULT_DIM = 2


class ImportLimitExceeded(OnnxImportError):
    """The child ran past a bound: ``kind`` is ``"time"`` (seconds) or ``"memory"`` (bytes)."""

    def __init__(self, kind: str, limit: float) -> None:
        super().__init__(f"the import ran past its {kind} limit ({limit:g})")
        self.kind, self.limit = kind, limit


class DocumentTooLarge(OnnxImportError):
    """The document came out larger than ``max_bytes`` of JSON (``size`` bytes)."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"the imported graph has {size} bytes of JSON; at most {limit}")
        self.size, self.limit = size, limit


def _frame(header: dict[str, Any], *parts: bytes) -> bytes:
    head = json.dumps(header).encode()
    return len(head).to_bytes(8, "big") + head + b"".join(parts)


def _unframe(raw: bytes) -> tuple[dict[str, Any], bytes]:
    n = int.from_bytes(raw[:8], "big")
    return json.loads(raw[8 : 8 + n]), raw[8 + n :]


def import_in_child(
    data: bytes,
    name: str,
    dims: Mapping[str, int],
    *,
    max_bytes: int,
    bound: str,
    seconds: float,
    memory: int,
    names: Mapping[str, str] | None = None,
) -> tuple[dict[str, Any], bytes, list[dict[str, Any]]]:
    """``(document, weights .npz bytes, axes)`` of the ONNX model ``data`` (uploaded as
    ``name``), imported in a bounded child (module docstring) with its axes named as ``names``
    says (:func:`~geon.interop.onnx_import.import_onnx`; ``None`` keeps ``d<length>``), each of
    ``axes`` an :class:`~geon.interop.onnx_roles.AxisProposal` as JSON. Raises
    :class:`ImportLimitExceeded`, :class:`DocumentTooLarge`, or :class:`OnnxImportError` with
    the importer's refusal; a child that ends without an answer for another reason raises
    ``RuntimeError`` with its stderr."""
    request = {"name": name, "dims": dict(dims), "max_bytes": max_bytes, "bound": bound,
               "memory": memory, "cpu": int(seconds) + 1,
               "names": None if names is None else dict(names)}  # fmt: skip
    header, rest = _in_child(request, data, seconds, memory, max_bytes)
    n = header["document_bytes"]
    return json.loads(rest[:n]), rest[n:], list(header.get("axes", []))


def review_in_child(
    data: bytes,
    name: str,
    dims: Mapping[str, int],
    *,
    max_bytes: int,
    bound: str,
    seconds: float,
    memory: int,
) -> list[dict[str, Any]]:
    """The axes :func:`import_in_child` would answer (each an
    :class:`~geon.interop.onnx_roles.AxisProposal` as JSON, under the names as imported), read
    in the same bounded child, the same refusals raised, but without building the document or
    its weights (:func:`~geon.interop.onnx_import.review_onnx`: an import's review, issue 35).
    ``max_bytes`` refuses only what the importer's estimate surely exceeds then (the document
    is not made to be measured: :class:`DocumentTooLarge` comes once the names are given)."""
    request = {"name": name, "dims": dict(dims), "max_bytes": max_bytes, "bound": bound,
               "memory": memory, "cpu": int(seconds) + 1, "review": True}  # fmt: skip
    header, _ = _in_child(request, data, seconds, memory, max_bytes)
    return list(header.get("axes", []))


def _in_child(
    request: dict[str, Any], data: bytes, seconds: float, memory: int, max_bytes: int
) -> tuple[dict[str, Any], bytes]:
    """The child's ``ok`` answer to ``request`` on ``data``: its header and the bytes after;
    every other answer raised as :func:`import_in_child` says."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="geon-import-") as empty:
        child = subprocess.Popen(
            [sys.executable, "-P", "-m", "geon.interop.onnx_bounded"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=empty,
            env=env,
            start_new_session=True,  # its own process group, killed whole
        )
        try:
            out, err = child.communicate(_frame(request, data), timeout=seconds)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
            raise ImportLimitExceeded("time", seconds) from None
    if child.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        raise ImportLimitExceeded("time", seconds)
    if len(out) < 8:
        tail = err.decode("utf-8", "replace")[-2000:]
        if any(s in tail for s in ("MemoryError", "bad_alloc", "Cannot allocate memory")):
            raise ImportLimitExceeded("memory", memory)
        raise RuntimeError(
            f"the import's child ended ({child.returncode}) without an answer: {tail}"
        )
    header, rest = _unframe(out)
    status = header["status"]
    if status == "ok":
        return header, rest
    if status == "memory":
        raise ImportLimitExceeded("memory", memory)
    if status == "too_large":
        raise DocumentTooLarge(header["size"], max_bytes)
    if status == "refused":
        raise OnnxImportError(header["message"])
    raise RuntimeError(f"the import's child failed: {header.get('message', '')}")


def _parse(data: bytes, name: str) -> Any:
    """The ``ModelProto`` in ``data`` (parsed before the memory bound: its size is the upload's,
    bounded by ``GEON_IMPORT_MAX_BYTES``, and protobuf reports a failed allocation as a bad
    message)."""
    import onnx

    try:
        model = onnx.load_model_from_string(data)
    except Exception:
        model = None
    if model is None or not model.HasField("graph"):
        raise OnnxImportError(f'"{name}" is not an ONNX model; expected a file saved by onnx.save')
    return model


def _convert(request: dict[str, Any], model: Any) -> tuple[dict[str, Any], bytes]:
    import io

    import numpy as np

    from geon.interop.onnx_gate import refuse_external
    from geon.interop.onnx_import import import_onnx, review_onnx

    refuse_external(model, f'"{request["name"]}"')
    dims = dict(request["dims"])
    for vi in model.graph.input:
        for d in vi.type.tensor_type.shape.dim:
            if d.HasField("dim_param") and d.dim_param and d.dim_param not in dims:
                dims[d.dim_param] = DEFAULT_DIM
    if request.get("review"):  # the axes only: no document, no weights (review_in_child)
        proposals = review_onnx(model, dims, request["max_bytes"], request["bound"])
        return {"status": "ok", "axes": [p.to_json() for p in proposals]}, b""
    imported = import_onnx(
        model, dims=dims, max_bytes=request["max_bytes"], bound=request["bound"],
        names=request.get("names"),
    )  # fmt: skip
    document = json.dumps(imported.graph.to_json(), separators=(",", ":")).encode()
    if len(document) > request["max_bytes"]:
        return {"status": "too_large", "size": len(document)}, b""
    packed = io.BytesIO()
    np.savez(packed, **imported.weights)  # type: ignore[arg-type]
    axes = [p.to_json() for p in imported.axes]
    header = {"status": "ok", "document_bytes": len(document), "axes": axes}
    return header, document + packed.getvalue()


def main() -> int:
    """The child: read the request, bound itself, import, answer on stdout."""
    import resource

    import numpy  # noqa: F401 - loaded before the memory bound, like the importer itself
    import onnx.reference  # noqa: F401

    import geon.interop.onnx_import  # noqa: F401

    request, data = _unframe(sys.stdin.buffer.read())
    memory, cpu = int(request["memory"]), int(request["cpu"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    try:
        model = _parse(data, request["name"])
        del data
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        header, body = _convert(request, model)
    except MemoryError:
        header, body = {"status": "memory"}, b""
    except OnnxImportError as exc:
        header, body = {"status": "refused", "message": str(exc)}, b""
    except Exception as exc:  # the parent logs it; the person sees a generic failure
        from geon.core.errors import GeonError

        status = "refused" if isinstance(exc, GeonError) else "failed"
        header, body = {"status": status, "message": f"{type(exc).__name__}: {exc}"}, b""
        if status == "refused":
            header["message"] = str(exc)
    sys.stdout.buffer.write(_frame(header, body))
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())

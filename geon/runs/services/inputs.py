"""Uploaded inputs: an ``.npz`` is checked before a run is stored (DESIGN.md §7: limits refuse
oversized runs before anything is allocated). Its size packed and unpacked, then each member's
``.npy`` header (names, shapes, dtypes, no Python objects) against the document's inputs, and
only then its data, read without pickles. :func:`npy_header` is also how a result's view reads
a header before its data."""

from __future__ import annotations

import dataclasses
import math
import os
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, Any

import numpy as np

from geon import execute
from geon.core.errors import GeonError
from geon.execute.limits import format_bytes
from geon.runs.services.errors import RunRefused

#: Bytes an ``.npz`` may hold beyond its arrays' data: each member's zip entries and ``.npy``
#: header, and the archive's directory.
NPZ_OVERHEAD_BYTES = 64 * 1024
NPZ_MEMBER_OVERHEAD_BYTES = 4096

#: The widest element an uploaded array may have (complex128): an input's upload is capped at
#: its elements times this, whatever dtype the file uses.
NPZ_MAX_ITEMSIZE = 16


@dataclass(frozen=True)
class NpyHeader:
    """What an ``.npy`` member's header says: enough to check it before reading its data."""

    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    fortran_order: bool
    # Bytes before the data (magic, version, header).
    offset: int

    @property
    def size(self) -> int:
        """The member's whole size, as the header says."""
        return self.offset + self.dtype.itemsize * math.prod(self.shape)

    def placeholder(self) -> np.ndarray[Any, Any]:
        """An array of this shape and dtype that allocates one element (for the checks)."""
        return np.broadcast_to(np.zeros((), self.dtype), self.shape)


def npy_header(
    archive: zipfile.ZipFile, member: str | zipfile.ZipInfo, max_header_size: int = 10_000
) -> NpyHeader:
    """The header of one ``.npy`` member of an archive, read without its data (numpy's own
    header readers; ``max_header_size`` bounds what they parse)."""
    with archive.open(member) as f:
        version = np.lib.format.read_magic(f)
        read = (
            np.lib.format.read_array_header_1_0
            if version == (1, 0)
            else np.lib.format.read_array_header_2_0
        )
        shape, fortran, dtype = read(f, max_header_size=max_header_size)
        return NpyHeader(tuple(shape), dtype, fortran, f.tell())


def check_npz_size(upload: IO[bytes], name: str, limits: execute.Limits) -> None:
    """Refuse an upload over ``limits.max_bytes``, packed or as its members say unpacked, and
    one that is not a zip archive; nothing is decompressed."""
    limit = format_bytes(limits.max_bytes)
    size = _size_of(upload)
    if size > limits.max_bytes:
        raise RunRefused(
            "inputs_too_large",
            f'inputs file "{name}" has {format_bytes(size)}; the limit is {limit} (GEON_MAX_BYTES)',
            status=413,
        )
    try:
        with zipfile.ZipFile(upload) as archive:
            unpacked = sum(member.file_size for member in archive.infolist())
    except Exception:  # any failure to read an untrusted archive means "not an .npz"
        raise _not_npz(name) from None
    if unpacked > limits.max_bytes:
        raise RunRefused(
            "inputs_too_large",
            f'inputs file "{name}" holds {format_bytes(unpacked)} of arrays; the limit is {limit} '
            "(GEON_MAX_BYTES)",
            status=413,
        )


def check_npz(upload: IO[bytes], name: str, plan: execute.Plan, seed: int | None) -> None:
    """Check an uploaded ``.npz`` against ``plan``'s inputs. Before any data is read: the upload
    is capped near what the inputs need, and each member's header (names, shapes, dtypes, and
    the size the archive gives it) is checked against the inputs; then each array is read
    (without pickles) to prove that it decodes."""
    _check_cap(upload, name, plan)
    try:
        archive = zipfile.ZipFile(upload)
    except Exception:
        raise _not_npz(name) from None
    with archive:
        headers = _member_headers(archive, name)
        _check_inputs(plan, {k: h.placeholder() for k, (_, h) in headers.items()}, name, seed)
        for key, (info, _header) in headers.items():
            try:
                with archive.open(info) as f:
                    np.lib.format.read_array(f, allow_pickle=False)
            except Exception as error:  # data that ends early or does not decompress
                raise RunRefused(
                    "invalid_npz",
                    f'inputs file "{name}": "{key}" cannot be read ({type(error).__name__}: '
                    f"{error}); expected an array written by numpy.save",
                ) from None


def _size_of(upload: IO[bytes]) -> int:
    upload.seek(0, os.SEEK_END)
    size = upload.tell()
    upload.seek(0)
    return size


def _not_npz(name: str) -> RunRefused:
    return RunRefused(
        "invalid_npz",
        f'inputs file "{name}" is not an .npz file; expected one written by numpy.savez or '
        "numpy.savez_compressed",
    )


def _check_cap(upload: IO[bytes], name: str, plan: execute.Plan) -> None:
    """Refuse an upload larger than the graph's inputs could need, at the widest dtype."""
    needed = sum(math.prod(plan.tensors[i].shape) for i in plan.inputs) * NPZ_MAX_ITEMSIZE
    cap = needed + NPZ_OVERHEAD_BYTES + NPZ_MEMBER_OVERHEAD_BYTES * len(plan.inputs)
    size = _size_of(upload)
    if size > cap:
        raise RunRefused(
            "inputs_too_large",
            f'inputs file "{name}" has {format_bytes(size)}; the graph\'s inputs need at most '
            f"{format_bytes(cap)} (their elements at {NPZ_MAX_ITEMSIZE} bytes each)",
            status=413,
        )


def _member_headers(
    archive: zipfile.ZipFile, name: str
) -> dict[str, tuple[zipfile.ZipInfo, NpyHeader]]:
    """Each member's key (its name without ``.npy``), zip entry and header; only ``.npy``
    members, each once."""
    headers: dict[str, tuple[zipfile.ZipInfo, NpyHeader]] = {}
    for info in archive.infolist():
        if not info.filename.endswith(".npy"):
            raise RunRefused(
                "invalid_npz",
                f'inputs file "{name}": "{info.filename}" is not an array; expected only '
                ".npy members, as numpy.savez writes",
            )
        if info.filename[:-4] in headers:
            raise RunRefused(
                "invalid_npz",
                f'inputs file "{name}" holds "{info.filename}" twice; expected each array '
                "once, as numpy.savez writes",
            )
        headers[info.filename[:-4]] = (info, _read_npy_header(archive, info, name))
    return headers


def _read_npy_header(archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str) -> NpyHeader:
    """The header of one member, refusing objects and a size that disagrees with the zip's."""
    key = info.filename[: -len(".npy")]
    try:
        header = npy_header(archive, info, NPZ_MEMBER_OVERHEAD_BYTES)
    except Exception as error:  # a malformed member, whatever numpy or zipfile say about it
        raise RunRefused(
            "invalid_npz",
            f'inputs file "{name}": "{key}" cannot be read ({type(error).__name__}: {error}); '
            "expected an array written by numpy.save",
        ) from None
    if header.dtype.hasobject:
        raise RunRefused(
            "invalid_npz",
            f'inputs file "{name}": array "{key}" holds Python objects, which are not loaded '
            "(allow_pickle=False); expected numeric or boolean arrays",
        )
    if header.size != info.file_size:
        raise RunRefused(
            "invalid_npz",
            f'inputs file "{name}": array "{key}" has a header for shape {header.shape} and '
            f"dtype {header.dtype} ({header.size} bytes), but the archive says it holds "
            f"{info.file_size} bytes; expected an array written by numpy.save",
        )
    return header


def _describe(info: execute.TensorInfo) -> str:
    return f"shape {info.shape}, dtype {info.dtype}"


def _check_inputs(
    plan: execute.Plan,
    arrays: Mapping[str, np.ndarray[Any, Any]],
    name: str,
    seed: int | None,
) -> None:
    """Keys, shapes and dtypes of uploaded arrays against the document's inputs."""
    keys = execute.tensor_keys(plan.tensors)
    expected = {keys[i]: i for i in plan.inputs}
    by_id = {plan.tensors[i].id: i for i in plan.inputs}
    listed = ", ".join(f'"{k}" ({_describe(plan.tensors[i])})' for k, i in expected.items())
    fed: dict[int, str] = {}
    for key in arrays:
        index = expected.get(key, by_id.get(key))
        if index is None:
            raise RunRefused(
                "invalid_inputs",
                f'inputs file "{name}" has an array "{key}", which is not an input of the graph; '
                f"expected one of {listed or 'none (the graph has no inputs)'}",
                status=422,
            )
        if index in fed:
            raise RunRefused(
                "invalid_inputs",
                f'inputs file "{name}" has arrays "{fed[index]}" and "{key}" for the same '
                f'input "{keys[index]}"; expected one',
                status=422,
            )
        fed[index] = key
    try:
        execute.resolve_inputs(dataclasses.replace(plan, inputs=tuple(fed)), arrays, None)
    except GeonError as error:
        raise RunRefused("invalid_inputs", f'inputs file "{name}": {error}', status=422) from None
    missing = [i for i in plan.inputs if i not in fed]
    if missing and seed is None:
        info = plan.tensors[missing[0]]
        raise RunRefused(
            "invalid_inputs",
            f'inputs file "{name}" has no array for input "{keys[info.index]}" '
            f"({_describe(info)}); add it, or give a seed to generate the inputs the file lacks",
            status=422,
        )

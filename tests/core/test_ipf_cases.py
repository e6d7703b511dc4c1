"""The cases the editor's IPF mirror (``frontend/src/model/ipf.ts``) is tested on, computed here
with :mod:`geon.core.zspace` and stored in ``ipf_cases.json`` next to this file.

The test fails when the stored file is not what :func:`generate` computes now, so the mirror is
always held to today's Python. After a change to ``zspace``, write the file again with::

    .venv/bin/python -m tests.core.test_ipf_cases

Cases (each with a ``name``): an IPF applied to a point or a range (``ipf``), an IPF that cannot
be built (``ipf_error``), a range clipped to bounds (``clip``) and a range split (``split``).
Hand-picked edge cases come first (negative and mixed-sign coefficients, zero columns, empty
ranges, offsets, non-square projections), then seeded random ones.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from geon.core.errors import GeonError
from geon.core.zspace import IPF, ZRange

CASES_FILE = Path(__file__).parent / "ipf_cases.json"
SEED = 9
RANDOM_IPF_CASES = 60
RANDOM_SPLIT_CASES = 20

Matrix = list[list[int]]


def _range_json(r: ZRange) -> dict[str, list[int]]:
    return {"start": list(r.start), "end": list(r.end)}


def _ipf_case(
    name: str,
    projection: Matrix,
    offset: list[int],
    shape: list[int],
    *,
    point: list[int] | None = None,
    index: tuple[list[int], list[int]] | None = None,
) -> dict[str, Any]:
    case: dict[str, Any] = {
        "kind": "ipf",
        "name": name,
        "projection": projection,
        "offset": offset,
        "shape": shape,
    }
    f = IPF(projection, offset, shape)
    if point is not None:
        case["point"] = point
        got = f(point)
    else:
        assert index is not None
        r = ZRange(*index)
        case["range"] = _range_json(r)
        got = f(r)
    case["expect"] = _range_json(got)
    return case


def _error_case(
    name: str, projection: Matrix, offset: list[int], shape: list[int]
) -> dict[str, Any]:
    try:
        IPF(projection, offset, shape)
    except GeonError as error:
        message = str(error)
    else:  # pragma: no cover - a generator bug, not a test outcome
        raise AssertionError(f"{name}: IPF was built; expected an error")
    return {
        "kind": "ipf_error",
        "name": name,
        "projection": projection,
        "offset": offset,
        "shape": shape,
        "error": message,
    }


def _split_case(name: str, r: ZRange, dim: int, by: dict[str, Any]) -> dict[str, Any]:
    case: dict[str, Any] = {"kind": "split", "name": name, "range": _range_json(r), "dim": dim}
    case.update(by)
    try:
        case["expect"] = [_range_json(p) for p in r.split(dim, **by)]
    except GeonError as error:
        case["error"] = str(error)
    return case


def _clip_case(name: str, r: ZRange, bounds: ZRange) -> dict[str, Any]:
    return {
        "kind": "clip",
        "name": name,
        "range": _range_json(r),
        "bounds": _range_json(bounds),
        "expect": _range_json(r.clip(bounds)),
    }


def _edge_cases() -> list[dict[str, Any]]:
    eye = [[1, 0], [0, 1]]
    return [
        _ipf_case("identity point", eye, [0, 0], [1, 1], point=[3, 4]),
        _ipf_case("identity range with offset", eye, [200, 50], [1, 1], index=([5, 0], [10, 5])),
        _ipf_case("negative coefficient", [[-1]], [9], [1], index=([0], [4])),
        _ipf_case("mixed-sign row: every corner", [[1, -1]], [0], [1], index=([0, 0], [2, 2])),
        _ipf_case("mixed-sign row, point", [[2, -3]], [1], [2], point=[4, 1]),
        _ipf_case(
            "zero row: contracted dim", [[1, 0], [0, 0]], [0, 0], [1, 3], index=([0, 0], [2, 4])
        ),
        _ipf_case("zero column: broadcast index axis", [[0, 1]], [0], [1], index=([0, 0], [5, 2])),
        _ipf_case("conv window with stride", [[2]], [-1], [3], index=([0], [4])),
        _ipf_case("conv window, one shard", [[1]], [-1], [3], index=([4], [8])),
        _ipf_case(
            "empty range maps to empty at P.a + o", [[1, 2]], [3], [2], index=([1, 2], [1, 5])
        ),
        _ipf_case(
            "empty range, negative", [[-1, 0], [0, 1]], [0, 0], [1, 1], index=([2, 0], [2, 0])
        ),
        _ipf_case(
            "non-square: 3 rows, 2 cols",
            [[1, 0], [0, 1], [1, 1]],
            [0, 0, 0],
            [1, 1, 1],
            index=([0, 0], [3, 2]),
        ),
        _ipf_case(
            "non-square: 1 row, 3 cols", [[1, 1, 1]], [-2], [2], index=([0, 0, 0], [2, 3, 4])
        ),
        _ipf_case("rank 0 index space", [[], []], [4, 5], [2, 3], index=([], [])),
        _ipf_case("negative offset and shape", [[1, 0], [0, -2]], [-5, 7], [2, 3], point=[-1, 2]),
        _error_case("shape with an entry < 1", [[1]], [0], [0]),
        _error_case("shape of the wrong length", [[1, 0], [0, 1]], [0, 0], [1]),
        _error_case("offset of the wrong length", [[1, 0]], [0, 0], [1]),
        _error_case("ragged projection", [[1, 0], [2]], [0, 0], [1, 1]),
        _clip_case("clip inside", ZRange([1, 1], [3, 3]), ZRange([0, 0], [4, 4])),
        _clip_case("clip a padded read", ZRange([-1, 0], [3, 6]), ZRange([0, 0], [2, 6])),
        _clip_case("clip wholly before", ZRange([-3], [-1]), ZRange([0], [2])),
        _clip_case("clip wholly after", ZRange([5], [9]), ZRange([0], [2])),
        _clip_case("clip empty", ZRange([1], [1]), ZRange([0], [4])),
        _split_case("split by chunk", ZRange([0], [10]), 0, {"chunk": 4}),
        _split_case("split by parts", ZRange([0, 0], [10, 2]), 0, {"parts": 3}),
        _split_case("more parts than cells", ZRange([0], [2]), 0, {"parts": 4}),
        _split_case("split by sizes", ZRange([3, 0], [10, 1]), 0, {"sizes": [2, 0, 5]}),
        _split_case("sizes that do not sum", ZRange([0], [5]), 0, {"sizes": [2, 2]}),
        _split_case("zero chunk", ZRange([0], [5]), 0, {"chunk": 0}),
        _split_case("dim out of range", ZRange([0], [5]), 1, {"parts": 2}),
        _split_case("chunk of an empty dim", ZRange([0, 2], [3, 2]), 1, {"chunk": 2}),
    ]


def _random_cases(rng: random.Random) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for n in range(RANDOM_IPF_CASES):
        rows, cols = rng.randint(1, 4), rng.randint(1, 4)
        projection = [[rng.randint(-3, 3) for _ in range(cols)] for _ in range(rows)]
        offset = [rng.randint(-10, 10) for _ in range(rows)]
        shape = [rng.randint(1, 4) for _ in range(rows)]
        start = [rng.randint(-5, 5) for _ in range(cols)]
        if n % 3 == 0:
            out.append(_ipf_case(f"random {n}: point", projection, offset, shape, point=start))
            continue
        # about one range in six is empty in some dim
        end = [a + (0 if rng.random() < 0.06 else rng.randint(1, 6)) for a in start]
        out.append(_ipf_case(f"random {n}: range", projection, offset, shape, index=(start, end)))
    for n in range(RANDOM_SPLIT_CASES):
        rank = rng.randint(1, 3)
        start = [rng.randint(-4, 4) for _ in range(rank)]
        r = ZRange(start, [a + rng.randint(0, 9) for a in start])
        dim = rng.randrange(rank)
        by: dict[str, Any] = {"chunk": rng.randint(1, 5)} if n % 2 else {"parts": rng.randint(1, 5)}
        out.append(_split_case(f"random split {n}", r, dim, by))
    return out


def generate() -> dict[str, Any]:
    """Every case, as the JSON document the editor's tests read."""
    return {
        "about": "Written by tests/core/test_ipf_cases.py from geon.core.zspace; do not edit.",
        "cases": _edge_cases() + _random_cases(random.Random(SEED)),
    }


def render() -> str:
    return json.dumps(generate(), indent=1) + "\n"


def test_the_stored_cases_are_what_zspace_computes_now() -> None:
    # given the stored file, when the cases are computed again, then they are the same
    assert CASES_FILE.read_text(encoding="utf-8") == render()


def test_the_cases_cover_the_edges_the_mirror_must_get_right() -> None:
    cases = generate()["cases"]
    kinds = sorted({c["kind"] for c in cases})
    assert kinds == ["clip", "ipf", "ipf_error", "split"]
    ipfs = [c for c in cases if c["kind"] == "ipf"]
    mixed = [c for c in ipfs if any(r and min(r) < 0 < max(r) for r in c["projection"])]
    empty = [c for c in ipfs if "range" in c and ZRange.from_json(c["range"]).is_empty]
    non_square = [c for c in ipfs if len(c["projection"]) != len(c["projection"][0] or [0])]
    assert (len(cases), len(ipfs), len(mixed), len(empty), len(non_square)) == (112, 75, 32, 9, 52)


if __name__ == "__main__":
    CASES_FILE.write_text(render(), encoding="utf-8")
    print(f"wrote {CASES_FILE}")

"""``python -m geon import --dim NAME=N``, run as a user runs it: the length reaches the model's
named dim, and a bad item is refused in one line with the same words as the import endpoint's
``dims`` field (one reading of both: :mod:`geon.interop.dims`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.processes import geon

MLP = Path(__file__).resolve().parent.parent / "interop" / "models" / "mlp.onnx"


def test_a_dim_gives_the_named_axis_its_length(tmp_path: Path) -> None:
    done = geon("import", str(MLP), "-o", str(tmp_path / "mlp.json"), "--dim", " batch = 5 ")
    assert done.returncode == 0, done.stderr
    doc = json.loads((tmp_path / "mlp.json").read_text())
    [batch] = [n for n in doc["nodes"] if n.get("label") == "batch"]
    assert batch["body"]["length"] == 5


@pytest.mark.parametrize("item", ["batch=0", "batch", "=4", "batch=x", "batch=99999999999"])
def test_a_bad_dim_is_refused_in_one_line_naming_it(tmp_path: Path, item: str) -> None:
    done = geon("import", str(MLP), "-o", str(tmp_path / "mlp.json"), "--dim", item)
    assert done.returncode == 2
    assert done.stderr == (
        f'geon import: dims item "{item}" is invalid; expected NAME=N with 1 <= N <= '
        '2147483647, e.g. "batch=8"\n'
    )
    assert not (tmp_path / "mlp.json").exists()

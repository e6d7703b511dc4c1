"""``python -m geon run``: logical and sharded runs, .npz in and out, and clear refusals."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from geon import core as gc
from geon.cli import main
from geon.core.plans.shards import shard

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLE = str(ROOT / "geon" / "examples" / "loom_sharded_add.json")
Z = "781dd44d-cf72-4533-a495-6ff66ba1689a"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["run", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_sharded_run_prints_one_json_object_with_the_diff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # given the loom example and known inputs keyed by label
    t0 = np.arange(50, dtype=np.int32).reshape(10, 5)
    t1 = np.full((10, 5), 3, np.int32)
    np.savez(tmp_path / "in.npz", t0=t0, t1=t1)
    # when run sharded with --out
    code, out, err = _run(
        capsys, EXAMPLE, "--inputs", str(tmp_path / "in.npz"), "--sharded", "--out",
        str(tmp_path / "out.npz"),
    )  # fmt: skip
    # then stdout is one JSON object with the outputs and a zero diff, and out.npz holds z
    assert (code, err) == (0, "")
    assert json.loads(out) == {
        "outputs": [
            {
                "id": Z, "label": "z", "shape": [10, 5], "dtype": "int32",
                "sum": int((t0 + t1).sum()), "min": 3, "max": 52,
            }
        ],
        "max_abs_diff": {"z": 0.0},
    }  # fmt: skip
    with np.load(tmp_path / "out.npz") as saved:
        assert saved.files == ["z"]
        np.testing.assert_array_equal(saved["z"], t0 + t1)
        assert saved["z"].dtype == np.int32


def test_logical_run_with_seed_is_deterministic(capsys: pytest.CaptureFixture[str]) -> None:
    # given the same seed twice
    first = _run(capsys, EXAMPLE, "--seed", "7")
    second = _run(capsys, EXAMPLE, "--seed", "7")
    # then the outputs agree and there is no diff (not sharded)
    assert first == second
    assert first[0] == 0
    assert "max_abs_diff" not in json.loads(first[1])


def test_npz_keys_are_ids_where_labels_repeat(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # given a graph whose two outputs share the label "y"
    N = gc.Axis("N", 3)
    x = gc.placeholder(axes=[N], name="x")
    a, b = gc.exp(x, name="y"), gc.tanh(x, name="y")
    path = tmp_path / "g.json"
    path.write_text(json.dumps(gc.graph([a, b]).to_json()))
    np.savez(tmp_path / "in.npz", x=np.arange(3.0))
    # when run with --out
    code, _, err = _run(
        capsys, str(path), "--inputs", str(tmp_path / "in.npz"), "--out", str(tmp_path / "o.npz")
    )
    # then the outputs are keyed by their ids
    assert (code, err) == (0, "")
    with np.load(tmp_path / "o.npz") as saved:
        assert sorted(saved.files) == sorted([a.id, b.id])
        np.testing.assert_allclose(saved[a.id], np.exp(np.arange(3.0)))


def test_conv_sharded_over_height_via_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # given a conv2d sharded into 3 row blocks (its shards read halos)
    Ci, Hi = gc.Axis("Ci", 1, roles="Channel"), gc.Axis("Hi", 8, roles="Height")
    Wi = gc.Axis("Wi", 5, roles="Width")
    R, S, K = (
        gc.Axis("R", 3, roles="Height"),
        gc.Axis("S", 3, roles="Width"),
        gc.Axis("K", 2, roles="Channelout"),
    )
    P, Q = gc.Axis("P", 6, roles="Height"), gc.Axis("Q", 3, roles="Width")
    x = gc.placeholder(axes=[Ci, Hi, Wi], name="img")
    f = gc.placeholder(axes=[Ci - 1, R, S, K], name="filt")
    y = gc.conv2d(x, f, [K, P, Q], name="y")
    g = gc.graph([y])
    shard(g, y.op_id, dim="P", parts=3)
    path = tmp_path / "conv.json"
    path.write_text(json.dumps(g.to_json()))
    # when run sharded
    code, out, err = _run(capsys, str(path), "--sharded", "--seed", "1")
    # then the sharded result matches the logical one
    assert (code, err) == (0, "")
    assert json.loads(out)["max_abs_diff"]["y"] < 1e-12


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["missing.json"], 'geon run: cannot read "missing.json": No such file or directory'),
        (["--seed", "x"], 'geon run: --seed "x" is invalid; expected an integer such as 0'),
        (
            ["--backend", "tpu"],
            'geon run: --backend "tpu" is not known; expected "numpy" or "cupy"',
        ),
        (
            ["--inputs", "nope.npz"],
            'geon run: cannot read "nope.npz": No such file or directory',
        ),
    ],
    ids=["no-file", "bad-seed", "bad-backend", "no-npz"],
)
def test_bad_requests_are_one_line_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = argv if argv[0] == "missing.json" else [EXAMPLE, *argv]
    code, out, err = _run(capsys, *args)
    assert (code, out, err) == (2, "", message + "\n")


def _write(tmp_path: Path, name: str, data: Any) -> str:
    path = tmp_path / name
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data)
    return str(path)


def test_bad_npz_contents_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # given an .npz with a wrong shape, an unknown key, a pickled object, and a non-npz file
    np.savez(tmp_path / "shape.npz", t0=np.zeros((2, 2), np.int32), t1=np.zeros((10, 5), np.int32))
    np.savez(tmp_path / "key.npz", t9=np.zeros((10, 5), np.int32))
    np.savez(tmp_path / "obj.npz", t0=np.array([{"a": 1}], dtype=object))
    junk = _write(tmp_path, "junk.npz", b"not a zip")
    cases = {
        "shape.npz": 'geon run: input for tensor "t0" has shape (2, 2); expected (10, 5)',
        "key.npz": 'geon run: input "t9" names no single tensor; expected a tensor id or a '
        "unique label",
    }
    for name, message in cases.items():
        code, out, err = _run(capsys, EXAMPLE, "--inputs", str(tmp_path / name))
        assert (code, out, err) == (2, "", message + "\n")
    code, out, err = _run(capsys, EXAMPLE, "--inputs", str(tmp_path / "obj.npz"))
    assert (code, out) == (2, "")
    assert err.startswith(f'geon run: "{tmp_path / "obj.npz"}" is not a readable .npz file: ')
    assert "allow_pickle=False" in err
    code, out, err = _run(capsys, EXAMPLE, "--inputs", junk)
    assert (code, out) == (2, "")
    assert err.startswith(f'geon run: "{junk}" is not a readable .npz file: ')
    assert err.count("\n") == 1


def test_invalid_json_and_documents_with_errors_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # given a file that is not JSON, and a document whose operation reads a missing tensor
    bad = _write(tmp_path, "bad.json", "{nope")
    doc = json.loads(Path(EXAMPLE).read_text())
    doc["nodes"] = [n for n in doc["nodes"] if n["id"] != "2fa3fe28-2d47-47b6-8767-27c7dadbb18c"]
    broken = _write(tmp_path, "broken.json", json.dumps(doc))
    # when run / then each is refused in one line on stderr
    code, out, err = _run(capsys, bad)
    assert (code, out) == (2, "")
    assert err.startswith(f'geon run: "{bad}" is not valid JSON: ')
    code, out, err = _run(capsys, broken)
    assert (code, out) == (2, "")
    assert err.startswith(f'geon run: "{broken}" has ')
    assert err.endswith(f"; run geon check {broken} to see them all\n")
    assert err.count("\n") == 1


def test_cli_process_exits_nonzero_without_traceback(tmp_path: Path) -> None:
    # given the real command line on a missing file
    proc = subprocess.run(
        [sys.executable, "-m", "geon", "run", str(tmp_path / "none.json")],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    # then it fails with one line and no traceback
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert (
        proc.stderr
        == f'geon run: cannot read "{tmp_path / "none.json"}": No such file or directory\n'
    )


def test_unexpected_failure_is_still_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # given an executor that fails with a bug (not a GeonError)
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr("geon.execute.run", broken)
    # when the CLI runs / then the user sees one line, no traceback
    code, out, err = _run(capsys, EXAMPLE)
    assert (code, out, err) == (
        2,
        "",
        "geon run: the executor failed unexpectedly (RuntimeError: boom)\n",
    )


def test_cupy_backend_without_cupy_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # given a machine without CuPy
    monkeypatch.setitem(sys.modules, "cupy", None)
    # when run with --backend cupy / then one line names the backend and what is available
    code, out, err = _run(capsys, EXAMPLE, "--backend", "cupy")
    assert (code, out, err) == (
        2,
        "",
        'geon run: backend "cupy" is not available: CuPy is not installed (pip install '
        'geon[gpu]); available backends: ("numpy", "array_api_strict")\n',
    )


MLP_ONNX = ROOT / "tests" / "interop" / "models" / "mlp.onnx"


def test_an_imported_model_runs_with_its_weights_beside_it_as_onnxruntime_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # given a PyTorch MLP exported to ONNX (scripts/export_models.py), imported: the document and
    # its initializers' .npz beside it, keyed by ONNX names
    import onnxruntime as ort

    doc = tmp_path / "mlp.json"
    assert main(["import", str(MLP_ONNX), "-o", str(doc), "--dim", "batch=4"]) == 0
    x = np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)
    np.savez(tmp_path / "in.npz", x=x)
    capsys.readouterr()
    # when it runs with only the model's input in --inputs, as issue #20 writes it
    code, _, err = _run(
        capsys, str(doc), "--inputs", str(tmp_path / "in.npz"), "--out", str(tmp_path / "o.npz")
    )
    # then the weights came from mlp.npz and the output, under its ONNX name, is onnxruntime's
    assert (code, err) == (0, "")
    (expected,) = ort.InferenceSession(str(MLP_ONNX)).run(None, {"x": x})
    with np.load(tmp_path / "o.npz") as out:
        np.testing.assert_allclose(out["y"], expected, rtol=1e-5, atol=1e-6)
    # and a weight given twice is refused with its name
    np.savez(tmp_path / "w.npz", **{"0.weight": np.zeros((32, 16), np.float32)})
    np.savez(tmp_path / "in2.npz", x=x, **{"0.weight": np.zeros((32, 16), np.float32)})
    both = ("--inputs", str(tmp_path / "in2.npz"), "--weights", str(tmp_path / "w.npz"))
    code, _, err = _run(capsys, str(doc), *both)
    assert code == 2 and '"0.weight" is in both --inputs and the weights' in err

"""The JAX engine from the command line (issue 31): ``geon export --to jax`` writes a standalone
program that runs as its own process (forcing its host devices) and on 2 processes x 4 devices
with ``jax.distributed``; ``geon run --engine jax`` reports the difference from the logical run;
``geon verify`` prints predicted beside compiled collectives; every refusal is one line that
names the bad value, writes nothing, and the next request is still answered."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import geon.interop.jax_engine as jax_engine
from geon.cli import main
from geon.core.graph import Graph
from geon.execute import run
from geon.interop.jax_engine import CompiledCollective, compiled_collectives
from geon.interop.verify import match
from tests.engines.cases import cases
from tests.processes import free_port

CASES = dict(cases())


def _placed(tmp_path: Path, name: str) -> Path:
    path = tmp_path / "placed.json"
    path.write_text(json.dumps(CASES[name]().to_json()))
    return path


def _inputs(tmp_path: Path) -> Path:
    rng = np.random.default_rng(7)
    path = tmp_path / "in.npz"
    np.savez(
        path,
        x=rng.normal(size=(8, 4)).astype("float32"),
        w1=rng.normal(size=(4, 16)).astype("float32"),
        w2=rng.normal(size=(16, 4)).astype("float32"),
    )
    return path


def _logical(placed: Path, inputs: Path) -> np.ndarray:
    graph = Graph.from_json(json.loads(placed.read_text()))
    with np.load(inputs) as data:
        return run(graph, {k: data[k] for k in data.files}).by_key()["y"]


def _env() -> dict[str, str]:
    """This environment less any XLA_FLAGS: the program forces its own host devices."""
    return {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}


def test_the_exported_program_imports_only_jax_and_numpy_and_runs_as_its_own_process(
    tmp_path: Path,
) -> None:
    # given the MLP under a 2 x 4 mesh, exported as a JAX program
    placed, inputs = _placed(tmp_path, "mlp-2x4-dp-tp"), _inputs(tmp_path)
    prog = tmp_path / "prog.py"
    assert main(["export", str(placed), "--to", "jax", "-o", str(prog)]) == 0
    tree = ast.parse(prog.read_text())
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)
                for a in n.names}  # fmt: skip
    imported |= {n.module.split(".")[0] for n in ast.walk(tree)
                 if isinstance(n, ast.ImportFrom) and n.module}  # fmt: skip
    assert imported <= {"jax", "numpy", "argparse", "math", "os", "sys"}
    # when it runs as a process of its own (8 host devices it asks XLA for itself)
    out, hlo = tmp_path / "out.npz", tmp_path / "hlo.txt"
    done = subprocess.run(
        [sys.executable, str(prog), "--inputs", str(inputs), "--out", str(out), "--hlo", str(hlo)],
        env=_env(), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    # then it writes the outputs by label, equal to the logical run, and the compiled program
    assert done.returncode == 0, done.stderr
    with np.load(out) as data:
        np.testing.assert_allclose(data["y"], _logical(placed, inputs), rtol=1e-5, atol=1e-5)
    [collective] = compiled_collectives(hlo.read_text(), 8)
    assert (collective.kind, collective.bytes_per_device, collective.groups) == (
        "all-reduce",
        64,
        2,
    )


def test_the_exported_program_runs_on_two_processes_of_four_devices(tmp_path: Path) -> None:
    # given the exported 2 x 4 program and a coordinator on localhost
    placed, inputs = _placed(tmp_path, "mlp-2x4-dp-tp"), _inputs(tmp_path)
    prog = tmp_path / "prog.py"
    assert main(["export", str(placed), "--to", "jax", "-o", str(prog)]) == 0
    port = free_port()
    procs = []
    for rank in range(2):
        env = {**_env(), "JAX_COORDINATOR_ADDRESS": f"localhost:{port}",
               "JAX_NUM_PROCESSES": "2", "JAX_PROCESS_ID": str(rank)}  # fmt: skip
        out = tmp_path / f"out{rank}.npz"
        procs.append(subprocess.Popen(
            [sys.executable, str(prog), "--inputs", str(inputs), "--out", str(out)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        ))  # fmt: skip
    try:
        outputs = [p.communicate(timeout=90)[0] for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    # then both finish, each with 4 of the 8 devices, and process 0 writes the logical result
    assert [p.returncode for p in procs] == [0, 0], outputs
    assert not (tmp_path / "out1.npz").exists()
    with np.load(tmp_path / "out0.npz") as data:
        np.testing.assert_allclose(data["y"], _logical(placed, inputs), rtol=1e-5, atol=1e-5)


def test_run_engine_jax_reports_the_difference_from_the_logical_run(
    host_devices: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    placed, inputs = _placed(tmp_path, "mlp-megatron"), _inputs(tmp_path)
    out = tmp_path / "out.npz"
    capsys.readouterr()
    args = ["run", str(placed), "--engine", "jax", "--inputs", str(inputs), "--out", str(out)]
    assert main(args) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["engine"] == "jax" and report["devices"] == 4
    assert report["max_abs_diff"]["y"] < 1e-5
    assert report["compileSeconds"] > 0 and report["runSeconds"] > 0
    with np.load(out) as data:
        np.testing.assert_allclose(data["y"], _logical(placed, inputs), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--engine", "tpu"], '--engine "tpu" is not known; expected "numpy" or "jax"'),
        (["--engine", "jax", "--sharded"], "--engine jax runs the plan on JAX; leave out"),
    ],
)
def test_run_refuses_a_bad_engine_writes_nothing_and_answers_the_next_run(
    host_devices: int, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    args: list[str], message: str,
) -> None:  # fmt: skip
    placed, out = _placed(tmp_path, "mlp-megatron"), tmp_path / "out.npz"
    capsys.readouterr()
    assert main(["run", str(placed), *args, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists()
    assert main(["run", str(placed), "--engine", "jax", "--seed", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["max_abs_diff"]["y"] < 1e-5


def test_without_jax_run_and_verify_say_how_to_install_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    placed, out = _placed(tmp_path, "mlp-megatron"), tmp_path / "out.npz"
    monkeypatch.setattr(jax_engine, "jax_available", lambda: False)
    capsys.readouterr()
    assert main(["run", str(placed), "--engine", "jax", "--out", str(out)]) == 2
    assert "needs jax, which is not installed: pip install 'jax[cpu]" in capsys.readouterr().err
    assert main(["verify", str(placed)]) == 2
    assert "pip install 'jax[cpu]" in capsys.readouterr().err
    assert not out.exists()
    # and the NumPy engine still answers
    assert main(["run", str(placed), "--sharded"]) == 0
    assert json.loads(capsys.readouterr().out)["max_abs_diff"]["y"] < 1e-9


def test_verify_prints_predicted_beside_compiled_and_exits_0_when_they_agree(
    host_devices: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    placed = tmp_path / "worse.json"
    placed.write_text(
        json.dumps(CASES["transformer-Model axis split (worse on purpose)"]().to_json())
    )
    capsys.readouterr()
    assert main(["verify", str(placed)]) == 0
    table = capsys.readouterr().out
    assert (
        "equal" in table and "layer-norm-statistics" in table and table.rstrip().endswith("agrees")
    )
    assert "all-reduce 1024 B/device over (tp) x1" in table
    assert main(["verify", str(placed), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["agrees"] and report["devices"] == 2
    # the three all-reduces after Q, K and V are one tuple in XLA; the small ones are statistics
    assert {p["rule"] for p in report["predicted"]} == {"equal", "xla-combines"}
    assert {c["rule"] for c in report["compiled"]} == {
        "equal", "xla-combines", "layer-norm-statistics"}  # fmt: skip


@pytest.mark.parametrize(
    ("devices", "message"),
    [
        ("two", '--devices "two" is invalid; expected an integer 1..4096'),
        ("0", '--devices "0" is invalid; expected an integer 1..4096'),
        ("2", "--devices 2 is fewer than the plan's mesh needs (4)"),
    ],
)
def test_verify_refuses_bad_devices_and_answers_the_next_request(
    host_devices: int, tmp_path: Path, capsys: pytest.CaptureFixture[str], devices: str,
    message: str,
) -> None:  # fmt: skip
    placed = _placed(tmp_path, "mlp-megatron")
    before = placed.read_text()
    capsys.readouterr()
    assert main(["verify", str(placed), "--devices", devices]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert placed.read_text() == before
    assert main(["verify", str(placed), "--devices", "8"]) == 0


def test_a_mesh_larger_than_the_loaded_devices_is_refused_naming_the_flag(
    host_devices: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # given a plan on 16 devices while this process loaded jax with 8
    graph = CASES["mlp-data-parallel"]()
    text = json.dumps(graph.to_json()).replace('"dp": 8', '"dp": 16')
    placed = tmp_path / "big.json"
    placed.write_text(text)
    capsys.readouterr()
    assert main(["run", str(placed), "--engine", "jax"]) == 2
    err = capsys.readouterr().err
    assert "needs 16 devices; this process loaded jax with 8" in err
    assert "XLA_FLAGS=--xla_force_host_platform_device_count=16" in err


def test_an_unmatched_collective_is_unexplained_and_verify_disagrees() -> None:
    predicted = [{"kind": "all-reduce", "bytesPerDevice": 64, "bytes": 64, "groups": 1}]
    compiled = [CompiledCollective("all-gather", 128, 2, 1, 1, "all-gather")]
    report = match(predicted, compiled)
    assert not report["agrees"] and report["unexplained"] == 2
    assert [x["rule"] for x in (*report["predicted"], *report["compiled"])] == ["unexplained"] * 2


def test_compiled_collectives_reads_every_replica_group_form() -> None:
    text = "\n".join([
        "%a = f32[4,4]{1,0} all-reduce(%x), replica_groups=[2,4]<=[8], to_apply=%add",
        "%b = (f32[2]{0}, f64[2]{0}) all-reduce(%x, %y), replica_groups={{0,1},{2,3}}",
        "%c = f64[8]{0} all-gather(%x), replica_groups=mesh['a'=2,'b'=4] {'b'}, dimensions={0}",
        "%d = f32[3]{0} collective-permute(%x), source_target_pairs={{0,1},{1,2}}",
        "%e = f32[3]{0} add(%all-reduce, %x)",
    ])  # fmt: skip
    found = [(c.kind, c.bytes_per_device, c.devices, c.groups, c.combined)
             for c in compiled_collectives(text, 8)]  # fmt: skip
    assert found == [
        ("all-reduce", 64, 4, 2, 1),
        ("all-reduce", 24, 2, 2, 2),
        ("all-gather", 64, 4, 2, 1),
        ("permute", 12, 2, 2, 1),
    ]


def test_document_text_reaches_the_program_only_as_data(tmp_path: Path) -> None:
    # given a placed document whose labels hold quotes, a line break escape and code
    from geon import core as gc
    from geon.core.plans import apply_plan

    hostile = "x'); import os; os.system('echo owned') #\""
    n, d = gc.Axis("N", 4), gc.Axis("D", 2)
    x = gc.placeholder(axes=[n, d], name=hostile)
    graph = gc.graph([gc.relu(x, name='y"\\n print(1)')])
    placed = apply_plan(
        graph, {"name": "p", "mesh": {"axes": {"dp": 2}}, "axisMapping": {"N": "dp"}}
    )
    path = tmp_path / "placed.json"
    path.write_text(json.dumps(placed.to_json()))
    prog = tmp_path / "prog.py"
    assert main(["export", str(path), "--to", "jax", "-o", str(prog)]) == 0
    # then the program parses, calls nothing named by the document, and keys by the labels
    tree = ast.parse(prog.read_text())
    called = {n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
              for n in ast.walk(tree) if isinstance(n, ast.Call)}  # fmt: skip
    assert "system" not in called and "print" not in called
    assert hostile in {k.value for n in ast.walk(tree) if isinstance(n, ast.Dict)
                       for k in n.keys if isinstance(k, ast.Constant)}  # fmt: skip


def test_verify_refuses_a_document_with_no_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from geon import core as gc

    plain = tmp_path / "plain.json"
    n = gc.Axis("N", 4)
    plain.write_text(json.dumps(gc.graph([gc.relu(gc.placeholder(axes=[n], name="x"))]).to_json()))
    capsys.readouterr()
    assert main(["verify", str(plain)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f'geon verify: "{plain}" has no placed plan: nothing to verify; write one with geon plan '
        f"{plain} --plan PLAN.json -o PLACED.json\n"
    )

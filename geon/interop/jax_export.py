"""A placed document as a standalone JAX program (DESIGN.md §10, issue 31):
``python -m geon export PLACED.json --to jax -o prog.py``.

The program imports only jax and numpy. It builds the plan's mesh (on one CPU host it first asks
XLA for as many host devices as the mesh needs, ``--xla_force_host_platform_device_count``, when
jax is not yet loaded), a ``NamedSharding`` per input and output
(:mod:`geon.interop.jax_lowering`; outputs keep their operation's), and the graph as one
jitted function whose lines are the NumPy
export's (:mod:`geon.interop.export`) on ``jax.numpy``, each placed result pinned with
``jax.lax.with_sharding_constraint``. XLA's SPMD partitioner inserts the collectives.

>>> from geon import core as gc
>>> from geon.core.plans import apply_plan
>>> N, D = gc.Axis("N", 4), gc.Axis("D", 3)
>>> g = gc.graph([gc.relu(gc.placeholder(axes=[N, D], name="x"), name="h")])
>>> text = to_jax(apply_plan(g, {"name": "dp", "mesh": {"axes": {"dp": 2}},
...     "axisMapping": {"N": "dp"}}))
>>> [line.strip() for line in text.splitlines() if "wsc(" in line and "def" not in line]
["h = wsc(jnp.maximum(x, 0), P('dp', None))  # op:relu -> ('N', 'D')"]

Run it as ``python prog.py --inputs in.npz --out out.npz [--hlo hlo.txt]`` (arrays keyed by
tensor label, as the NumPy export's). With ``JAX_COORDINATOR_ADDRESS``, ``JAX_NUM_PROCESSES``
and ``JAX_PROCESS_ID`` set, it calls ``jax.distributed.initialize()`` first, every process
forcing its share of the host devices, and process 0 writes the files (docs/engines.md has a
worked example). In-process, :mod:`geon.interop.jax_engine` executes the same text.

Kernels beyond the NumPy export's: a plan's partial products (``op:dot_partial``) and partial
reductions (``params.parts``), as the reshape of the split axis into (parts, chunk).
"""

from __future__ import annotations

import re
from typing import Any

from geon.core.graph import Graph
from geon.interop.export import _literal, _np_dtype, _np_line
from geon.interop.jax_lowering import Lowering, Spec, lower_shardings
from geon.interop.program import (
    KNOWN,
    MALFORMED,
    Letters,
    Op,
    Program,
    Tensor,
    axis_name,
    malformed,
    read,
    reduced,
)

__all__ = ["JAX_KNOWN", "to_jax"]

JAX_KNOWN = (*KNOWN, "op:dot_partial")
"""The kernels the JAX export writes: the NumPy export's and a plan's partial products."""

_HEADER = '''"""A geon plan as a JAX program (written by python -m geon export --to jax).

Run:      python {{this file}} --inputs in.npz --out out.npz [--hlo hlo.txt]
Cluster:  set JAX_COORDINATOR_ADDRESS=host:port, JAX_NUM_PROCESSES=n and JAX_PROCESS_ID=i on
          every process (the same inputs on each); process 0 writes --out and --hlo.
Inputs and outputs are keyed by tensor label. Only jax and numpy are imported.
"""

import argparse
import math
import os
import sys

TITLE = {title}
MESH = {mesh!r}
DEVICES = {devices}


def force_host_devices():
    """On a CPU host, as many XLA host devices as this process's share of the mesh (only
    before jax is loaded; GPUs and TPUs ignore the flag)."""
    if "jax" in sys.modules:
        return
    processes = max(1, int(os.environ.get("JAX_NUM_PROCESSES") or 1))
    local = max(1, -(-DEVICES // processes))
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_force_host_platform_device_count" not in flags:
        flag = f"--xla_force_host_platform_device_count={{local}}"
        os.environ["XLA_FLAGS"] = f"{{flags}} {{flag}}".strip()


force_host_devices()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

jax.config.update("jax_enable_x64", True)

INPUTS = {inputs}
"""Per input label: shape, dtype and PartitionSpec (outputs keep the sharding of the operation
that writes them)."""


def align(x, src, dst):
    """x with axes src, transposed to dst's order, with length-1 dims for dst's other axes."""
    kept = [a for a in dst if a in src]
    x = jnp.transpose(x, [src.index(a) for a in kept])
    return x.reshape([x.shape[kept.index(a)] if a in src else 1 for a in dst])


def _erf(x):
    return jax.scipy.special.erf(x)


def windows(x, size, stride, padding, fill):
    """The (R, S) windows of x[n, c, H, W] padded with fill: [n, c, P, Q, R, S]."""
    (ph, pw), (sh, sw), (r, s) = padding, stride, size
    x = jnp.pad(x, [(0, 0), (0, 0), (ph, ph), (pw, pw)], constant_values=fill)
    p, q = (x.shape[2] - r) // sh + 1, (x.shape[3] - s) // sw + 1
    rows = [jnp.stack([x[:, :, i : i + (p - 1) * sh + 1 : sh, j : j + (q - 1) * sw + 1 : sw]
                       for j in range(s)], axis=-1) for i in range(r)]
    return jnp.stack(rows, axis=-2)


def conv2d(x, f, stride, padding):
    """x[n, C, H, W] convolved with f[K, C, R, S] (cross-correlation): [n, K, P, Q]."""
    (ph, pw) = padding
    return jax.lax.conv_general_dilated(
        x, f.astype(x.dtype), tuple(stride), [(ph, ph), (pw, pw)],
        dimension_numbers=("NCHW", "OIHW", "NCHW"), precision=jax.lax.Precision.HIGHEST,
    )


def pool2d(x, kind, size, stride, padding, include):
    """Max or average pooling of x[n, c, H, W]; an average counts padding when include."""
    if kind == "max":
        low = -jnp.inf if jnp.issubdtype(x.dtype, jnp.floating) else jnp.iinfo(x.dtype).min
        return windows(x, size, stride, padding, low).max(axis=(4, 5)).astype(x.dtype)
    total = windows(x, size, stride, padding, 0).sum(axis=(4, 5))
    ones = jnp.ones((1, 1, *x.shape[2:]))
    count = size[0] * size[1] if include else windows(ones, size, stride, padding, 0).sum((4, 5))
    return (total / count).astype(x.dtype)


def split_dim(x, dim, parts):
    """x with dim ``dim`` cut into (parts, chunk)."""
    return x.reshape(x.shape[:dim] + (parts, x.shape[dim] // parts) + x.shape[dim + 1 :])

'''

_FOOTER = '''

def make_mesh():
    """The plan's mesh on the first DEVICES devices JAX sees (every process's, in a cluster)."""
    devices = jax.devices()
    if len(devices) < DEVICES:
        raise SystemExit(
            f"the plan's mesh needs {DEVICES} devices; JAX sees {len(devices)} "
            f"({jax.default_backend()}): run on more devices or processes"
        )
    shape = [size for _, size in MESH]
    return Mesh(np.asarray(devices[:DEVICES]).reshape(shape), [name for name, _ in MESH])


def compile_program(mesh):
    """The jitted program lowered and compiled for ``mesh`` (its text: ``.as_text()``)."""

    def wsc(x, spec):
        return jax.lax.with_sharding_constraint(x, NamedSharding(mesh, spec))

    ins = {k: NamedSharding(mesh, spec) for k, (_, _, spec) in INPUTS.items()}
    fn = jax.jit(lambda inputs: model(inputs, wsc), in_shardings=(ins,))
    shapes = {k: jax.ShapeDtypeStruct(shape, dtype, sharding=ins[k])
              for k, (shape, dtype, _) in INPUTS.items()}
    return fn.lower(shapes).compile()


def place_inputs(arrays, mesh):
    """Each input as a global array sharded as the plan says (every process passes the whole
    host array; each keeps its devices' blocks)."""
    missing = sorted(set(INPUTS) - set(arrays))
    if missing:
        raise SystemExit(f"input {missing[0]!r} is missing; expected arrays {sorted(INPUTS)}")
    out = {}
    for key, (shape, dtype, spec) in INPUTS.items():
        host = np.asarray(arrays[key], dtype=dtype)
        if host.shape != tuple(shape):
            raise SystemExit(f"input {key!r} has shape {host.shape}; expected {tuple(shape)}")
        sharding = NamedSharding(mesh, spec)
        out[key] = jax.make_array_from_callback(host.shape, sharding, lambda i, h=host: h[i])
    return out


def fetch(outputs):
    """The outputs as host arrays (gathered from every process in a cluster)."""
    if jax.process_count() > 1:
        from jax.experimental import multihost_utils

        return {k: np.asarray(multihost_utils.process_allgather(v, tiled=True))
                for k, v in outputs.items()}
    return {k: np.asarray(v) for k, v in outputs.items()}


def run(arrays, mesh=None):
    """(outputs by label, the compiled program's text) for host ``arrays`` by label."""
    mesh = mesh or make_mesh()
    compiled = compile_program(mesh)
    return fetch(compiled(place_inputs(arrays, mesh))), compiled.as_text()


def main(argv=None):
    parser = argparse.ArgumentParser(description=TITLE)
    parser.add_argument("--inputs", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--hlo")
    args = parser.parse_args(argv)
    if os.environ.get("JAX_COORDINATOR_ADDRESS"):
        jax.distributed.initialize(
            coordinator_address=os.environ["JAX_COORDINATOR_ADDRESS"],
            num_processes=int(os.environ["JAX_NUM_PROCESSES"]),
            process_id=int(os.environ["JAX_PROCESS_ID"]),
        )
    with np.load(args.inputs, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    outputs, text = run(arrays)
    if jax.process_index() == 0:
        np.savez(args.out, **outputs)
        if args.hlo:
            with open(args.hlo, "w") as f:
                f.write(text)


if __name__ == "__main__":
    main()
'''


def _spec(spec: Spec | None) -> str:
    """``P(...)`` of a spec (``P()``: replicated)."""
    if spec is None:
        return "P()"
    return "P(" + ", ".join(repr(s) for s in spec) + ")"


def _jnp(line: str) -> str:
    """A NumPy export line on ``jax.numpy``."""
    return re.sub(r"\bnp\.", "jnp.", line)


def _dot_partial(op: Op) -> str:
    """The partial products: each operand's split axis cut into (parts, chunk), one einsum that
    keeps the parts letter and contracts the chunk's and the dot's other pairs."""
    x, y, r = op.inputs["x"][0], op.inputs["y"][0], op.result
    split, into = op.params["parts"]["axis"], op.params["parts"]["into"]
    parts = r.shape[r.axes.index(into)]
    letter = Letters(op)
    p_letter, c_letter = letter(into), letter("__chunk")
    names = {axis_name(a) for a in y.axes}
    pairs = {axis_name(a) for a in x.axes if axis_name(a) in names}
    xs, ys, pre = "", "", []
    for t, out in ((x, "x"), (y, "y")):
        text = ""
        var = t.var
        for i, a in enumerate(t.axes):
            if axis_name(a) == split:
                text += p_letter + c_letter
                var = f"split_dim({var}, {i}, {parts})"
            elif axis_name(a) in pairs:
                text += letter("pair:" + axis_name(a))
            else:
                text += letter(a)
        pre.append(var)
        if out == "x":
            xs = text
        else:
            ys = text
    res = "".join(letter(a) if a == into else _result_letter(letter, a, pairs) for a in r.axes)
    return f'{r.var} = jnp.einsum("{xs},{ys}->{res}", {pre[0]}, {pre[1]})'


def _result_letter(letter: Any, ref: str, pairs: set[str]) -> str:
    return letter("pair:" + axis_name(ref)) if axis_name(ref) in pairs else letter(ref)


def _partial_reduction(op: Op) -> str:
    """A reduction over parts: the split axis cut into (parts, chunk), the chunk and the other
    reduced axes reduced, the result aligned to ``[parts, kept...]``'s order."""
    from geon.core.ops.catalogue import CATALOGUE

    x, r = op.inputs["tensor"][0], op.result
    split, into = op.params["parts"]["axis"], op.params["parts"]["into"]
    parts = r.shape[r.axes.index(into)]
    dim = next(i for i, a in enumerate(x.axes) if axis_name(a) == split)
    red = set(reduced(op))
    axes = [*x.axes[:dim], into, "__chunk", *x.axes[dim + 1 :]]
    gone = tuple(i for i, a in enumerate(axes) if a == "__chunk" or (a in red and a != into))
    kept = [a for i, a in enumerate(axes) if i not in gone]
    reduce = CATALOGUE[op.kernel].numpy_expr  # sum, prod, max, min, mean: jnp's names too
    return (
        f"{r.var} = align(jnp.{reduce}(split_dim({x.var}, {dim}, {parts}), "
        f"axis={gone}), {kept!r}, {r.axes!r})"
    )


def _line(p: Program, op: Op) -> str:
    if op.kernel == "op:dot_partial":
        return _dot_partial(op)
    if "parts" in op.params:
        return _partial_reduction(op)
    return _jnp(_np_line(p, op))


def _input_spec(lowering: Lowering, t: Tensor) -> str:
    return _spec(lowering.specs.get(t.id)) if lowering.mesh_axes else "P()"


def to_jax(graph: Graph, title: str = "geon plan") -> str:
    """The standalone JAX program of ``graph`` under its placed plan (see the module
    docstring); :class:`ExportError` (or :class:`~geon.core.errors.GeonError`) naming what it
    cannot write."""
    p = read(graph, JAX_KNOWN)
    lowering = lower_shardings(graph, {t.id: tuple(t.shape) for t in p.tensors.values()})
    mesh = lowering.mesh_axes or (("devices", 1),)
    inputs = {
        t.key: (tuple(t.shape), _np_dtype(t.dtype), _input_spec(lowering, t))
        for t in p.leaves
        if t.value is None
    }
    in_text = (
        "{"
        + ", ".join(f"{k!r}: ({s!r}, {d!r}, {spec})" for k, (s, d, spec) in inputs.items())
        + "}"
    )
    lines = [
        _HEADER.format(
            title=repr(title), mesh=tuple(mesh), devices=lowering.devices,
            inputs=in_text,
        ),
        "def model(inputs, wsc):",
        '    """The outputs (by label) of the document from its inputs (by label), each placed'
        ' result pinned to the plan\'s sharding by wsc."""',
    ]  # fmt: skip

    def pinned(t: Tensor, expr: str) -> str:
        spec = lowering.specs.get(t.id)
        return f"wsc({expr}, {_spec(spec)})" if spec is not None and lowering.mesh_axes else expr

    for t in p.leaves:
        if t.value is not None:
            value = f"jnp.asarray({_jnp(_literal(t.value))}, dtype=jnp.{_np_dtype(t.dtype)})"
            lines.append(f"    {t.var} = {pinned(t, value)}")
        else:
            lines.append(f"    {t.var} = jnp.asarray(inputs[{t.key!r}])")
    for op in p.ops:
        try:
            line = _line(p, op)
        except MALFORMED as error:
            raise malformed(op, error) from None
        r = op.result
        if ";" not in line and line.startswith(f"{r.var} = "):
            line = f"{r.var} = {pinned(r, line[len(r.var) + 3 :])}"
        elif r.id in lowering.specs and lowering.mesh_axes:
            line = f"{line}; {r.var} = {pinned(r, r.var)}"
        axes = "(" + ", ".join(repr(a) for a in r.axes) + ")"
        lines.append(f"    {line}  # {op.kernel} -> {axes}")
    outs = ", ".join(f"{t.key!r}: {t.var}" for t in p.outputs)
    lines.append(f"    return {{{outs}}}")
    return "\n".join(lines) + _FOOTER

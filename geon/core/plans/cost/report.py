"""The cost of a placed document as one JSON object (DESIGN.md §9, issue 16's ``cost`` CLI):
``{"profile", "collectives", "devices", "time", "memory"}``.

>>> from geon.core.graph import Graph
>>> from geon.core.plans.cost.profiles import load_profile
>>> report = cost_report(Graph(), load_profile("cpu-host"))
>>> report["collectives"], report["devices"], report["time"]
([], [], {'lower': 0.0, 'upper': 0.0})

- ``collectives``: :mod:`geon.core.plans.cost.collectives`, one per edge that moves data (with
  ``groups`` and ``bytesPerDevice``, XLA's per-device buffer, beside ``bytes``);
- ``devices``: per device of every mesh used (idle ones too), ``{"mesh", "coords", "flops",
  "computeSeconds", "commSeconds", "peakBytes", "memory": {parameters, gradients, optimizer,
  activations, temporaries, communication}, "overBudget"}`` (:mod:`~geon.core.plans.cost.timing`,
  :mod:`~geon.core.plans.cost.ledger`);
- ``time``: ``{"lower", "upper"}`` seconds (:func:`~geon.core.plans.cost.timing.time_interval`);
- ``memory``: ``{"capacity", "imbalancePercent", "overBudget"}``: the profile's capacity per
  device, the peaks' imbalance, and whether any device's peak is over the capacity.

:func:`device_rows` is the REST answer's ``devices``: per device the written plan uses, the bytes
it reads and writes (:func:`geon.core.plans.cost.cells.device_bytes`) beside the ledger's
``temporaries`` and peak (``total``): one memory model, the ledger's.
"""

from __future__ import annotations

from typing import Any

from geon.core.collector import collector_paused
from geon.core.graph import Graph
from geon.core.plans.cost.cells import device_bytes
from geon.core.plans.cost.collectives import infer_collectives
from geon.core.plans.cost.ledger import imbalance_percent, memory_ledger
from geon.core.plans.cost.pipelined import pipeline_report
from geon.core.plans.cost.placed import read_placed
from geon.core.plans.cost.profiles import Profile
from geon.core.plans.cost.timing import all_work, device_times, time_interval
from geon.core.plans.model import Plan
from geon.core.plans.table import ShardTable, read_table

__all__ = ["cost_report", "device_rows"]


@collector_paused()
def cost_report(
    graph: Graph, profile: Profile, table: ShardTable | None = None, *, plan: Plan | None = None
) -> dict[str, Any]:
    """The cost of ``graph``'s placed plan under ``profile`` (see the module docstring; ``table``:
    the document's :func:`~geon.core.plans.table.read_table`, when already read); the cyclic
    collector is paused meanwhile (:mod:`geon.core.collector`). With the ``plan`` written into
    ``graph`` and pipeline stages in it, the pipelined step (:mod:`.pipelined`): ``devices`` are
    the whole mesh's, ``collectives`` gain the ``send`` of each microbatch between stages,
    ``time`` includes the bubble, and ``pipeline`` says how."""
    doc = read_placed(graph, table)
    collectives = infer_collectives(doc, profile)
    work = all_work(doc, profile)
    times = device_times(doc, work, collectives)
    memory = memory_ledger(doc)
    capacity = profile.device.memory
    devices = []
    for device, t in times.items():
        held = memory[device]
        devices.append(
            {
                "mesh": device[0],
                "coords": list(device[1]),
                "flops": t.flops,
                "computeSeconds": t.compute,
                "commSeconds": t.comm,
                "peakBytes": held.peak,
                "memory": held.to_json(),
                "overBudget": held.peak > capacity,
            }
        )
    if plan is not None and plan.pipeline is not None:
        found = pipeline_report(
            doc, plan.pipeline, profile, plan.mesh_axes, work, collectives, times, memory
        )
        for d in found["devices"]:
            d["overBudget"] = d["peakBytes"] > capacity
        peaks = [d["peakBytes"] for d in found["devices"]]
        return {
            "profile": profile.to_json(),
            "collectives": [c.to_json() for c in collectives] + found["sends"],
            "devices": found["devices"],
            "time": found["time"],
            "memory": {
                "capacity": capacity,
                "imbalancePercent": imbalance_percent(peaks),
                "overBudget": any(x > capacity for x in peaks),
            },
            "pipeline": found["pipeline"],
        }
    return {
        "profile": profile.to_json(),
        "collectives": [c.to_json() for c in collectives],
        "devices": devices,
        "time": time_interval(doc, work, collectives, times),
        "memory": {
            "capacity": capacity,
            "imbalancePercent": imbalance_percent([held.peak for held in memory.values()]),
            "overBudget": any(held.peak > capacity for held in memory.values()),
        },
    }


def device_rows(
    graph: Graph, report: dict[str, Any], table: ShardTable | None = None
) -> list[dict[str, Any]]:
    """Per device the plan written into ``graph`` places shards on, ``{"mesh", "coords",
    "inputs", "outputs", "temporaries", "total"}``: the distinct bytes it reads that it does not
    write and the bytes it writes (:func:`~geon.core.plans.cost.cells.device_bytes`: what it
    touches), and at its ledger's peak the ``temporaries`` and the whole (``total``), read from
    ``report`` (:func:`cost_report` of ``graph``) or, for the devices a pipelined report names
    otherwise, from the ledger of ``graph`` as written."""
    table = read_table(graph) if table is None else table
    touched = device_bytes(graph, table)
    held = {
        (d["mesh"], tuple(d["coords"])): (d["memory"]["temporaries"], d["peakBytes"])
        for d in report["devices"]
    }
    if any(device not in held for device in touched):
        ledger = memory_ledger(read_placed(graph, table))
        held.update({d: (dict(m.split)["temporaries"], m.peak) for d, m in ledger.items()})
    return [
        {
            "mesh": mesh,
            "coords": list(coords),
            **figures,
            "temporaries": held[(mesh, coords)][0],
            "total": held[(mesh, coords)][1],
        }
        for (mesh, coords), figures in touched.items()
    ]

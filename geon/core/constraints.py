"""A stable import path for the checker, which lives in :mod:`geon.core.checks` (one module per
constraint family, a registry, incremental checking, the fast path); range parsing and coverage
live in :mod:`geon.core.zspace`, loading a document in :mod:`geon.core.documents` and an
operation's index range in :mod:`geon.core.ranges` (the graph model's, issue 37).

>>> from importlib import resources
>>> text = resources.files("geon.examples").joinpath("loom_sharded_add.json").read_text()
>>> check_document(text)
[]
"""

from geon.core.checks import (
    COVERAGE_WORK_BASE,
    COVERAGE_WORK_PER_SHARD,
    LOOM_CONSTRAINTS,
    MAX_OVERLAPS_COUNTED,
    IncrementalChecker,
    all_constraints,
    check,
    check_document,
    check_node,
    clear_caches,
    coverage,
    is_well_formed,
)
from geon.core.documents import load_document
from geon.core.ranges import index_range
from geon.core.zspace import parse_range

__all__ = [
    "COVERAGE_WORK_BASE",
    "COVERAGE_WORK_PER_SHARD",
    "LOOM_CONSTRAINTS",
    "MAX_OVERLAPS_COUNTED",
    "IncrementalChecker",
    "all_constraints",
    "check",
    "check_document",
    "check_node",
    "clear_caches",
    "coverage",
    "index_range",
    "is_well_formed",
    "load_document",
    "parse_range",
]

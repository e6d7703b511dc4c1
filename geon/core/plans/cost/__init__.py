"""The cost model of a placed plan (DESIGN.md §9, issue 16 items 3-5): hardware profiles
(:mod:`.profiles`, JSON under ``profiles/``), the collective of every edge (:mod:`.collectives`,
timed by the ring formulas of :mod:`.formulas`), time per application, device and plan
(:mod:`.timing`), the memory ledger per device (:mod:`.ledger`), all read from the document once
(:mod:`.placed`) and reported as one JSON object (:mod:`.report`, what ``geon cost`` prints).
:mod:`geon.core.plans.cost.cells` keeps the byte counts per device and the point-to-point transfers.
"""

from geon.core.plans.cost.collectives import Collective, infer_collectives
from geon.core.plans.cost.formulas import KINDS, Kind, collective_seconds
from geon.core.plans.cost.placed import read_placed
from geon.core.plans.cost.profiles import (
    DEFAULT_PROFILE,
    Link,
    Profile,
    load_profile,
    parse_profile,
    shipped_profiles,
)
from geon.core.plans.cost.report import cost_report

__all__ = [
    "DEFAULT_PROFILE",
    "KINDS",
    "Collective",
    "Kind",
    "Link",
    "Profile",
    "collective_seconds",
    "cost_report",
    "infer_collectives",
    "load_profile",
    "parse_profile",
    "read_placed",
    "shipped_profiles",
]

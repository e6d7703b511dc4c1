"""The editor's cases of partial operations (``op:dot_partial``, reductions with ``parts``;
``partial_cases.json``, read by frontend/src/model/infer/partial.test.ts) are the server's
answers."""

from __future__ import annotations

import json
from pathlib import Path

from geon.core.ops import run_case

TABLE = json.loads((Path(__file__).parent / "partial_cases.json").read_text(encoding="utf-8"))


def test_the_cases_are_the_servers_answers() -> None:
    # given the table the TypeScript mirror runs
    for case in TABLE["cases"]:
        body = {k: v for k, v in case.items() if k not in ("name", "expect")}
        # then each expectation is what geon.core.ops.run_case answers now
        assert run_case(body) == case["expect"], case["name"]

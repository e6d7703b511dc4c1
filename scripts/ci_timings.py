"""Print the table ``make test`` ends with: each step's seconds, then each suite's per pass.

    python3 scripts/ci_timings.py FOLDER

FOLDER holds ``steps.tsv`` (one ``name<TAB>seconds<TAB>exit status`` line per make step, written
by the Makefile) and ``pytest-<pass>.json`` (each pytest run's suites, written by
``tests/timing_plugin.py``). Standard library only: it runs even when the set-up failed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def read_steps(folder: Path) -> list[tuple[str, float, int]]:
    path = folder / "steps.tsv"
    if not path.exists():
        return []
    steps = []
    for line in path.read_text(encoding="utf-8").splitlines():
        name, seconds, status = line.split("\t")
        steps.append((name, float(seconds), int(status)))
    return steps


def read_passes(folder: Path) -> list[dict[str, Any]]:
    return [
        json.loads(path.read_text(encoding="utf-8"))
        for path in sorted(folder.glob("pytest-*.json"))
    ]


def table(steps: list[tuple[str, float, int]], passes: list[dict[str, Any]]) -> str:
    lines = []
    if steps:
        width = max(len(name) for name, _, _ in [*steps, ("total", 0.0, 0)])
        lines.append(f"{'step':<{width}}  {'seconds':>8}")
        for name, seconds, status in steps:
            failed = "  (failed)" if status else ""
            lines.append(f"{name:<{width}}  {seconds:>8.1f}{failed}")
        lines.append(f"{'total':<{width}}  {sum(s for _, s, _ in steps):>8.1f}")
    if passes:
        suites = sorted({name for run in passes for name in run["suites"]})
        width = max(len(name) for name in [*suites, "suite", "pytest wall"])
        heads = [f"{'pass ' + str(run['label']):>18}" for run in passes]
        lines += ["", f"{'suite':<{width}}" + "".join(heads)]
        totals = []
        for name in suites:
            cells = []
            for run in passes:
                suite = run["suites"].get(name)
                cells.append(
                    f"{suite['seconds']:>9.1f} s {suite['tests']:>4} t" if suite else f"{'-':>18}"
                )
            lines.append(f"{name:<{width}}" + "".join(cells))
        for run in passes:
            seconds = sum(s["seconds"] for s in run["suites"].values())
            tests = sum(s["tests"] for s in run["suites"].values())
            totals.append(f"{seconds:>9.1f} s {tests:>4} t")
        lines.append(f"{'all suites':<{width}}" + "".join(totals))
        lines.append(
            f"{'pytest wall':<{width}}"
            + "".join(f"{run['wall_seconds']:>9.1f} s       " for run in passes)
        )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: ci_timings.py FOLDER", file=sys.stderr)
        return 2
    folder = Path(argv[1])
    steps, passes = read_steps(folder), read_passes(folder)
    if not steps and not passes:
        print(f"ci_timings: no timings in {folder}", file=sys.stderr)
        return 0
    print("\nmake test, seconds (t: tests)")
    print(table(steps, passes))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

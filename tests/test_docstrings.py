"""Every docstring example in geon runs as written (STYLE.md: examples are tests).

One test per module that has examples, found by walking the package, so a new module's examples
run without being listed anywhere.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import geon


def _modules() -> list[str]:
    names = [info.name for info in pkgutil.walk_packages(geon.__path__, "geon.")]
    return sorted(n for n in names if ".migrations" not in n and not n.endswith("__main__"))


def _with_examples(name: str) -> bool:
    module = importlib.import_module(name)
    return any(test.examples for test in doctest.DocTestFinder().find(module))


MODULES = [name for name in _modules() if _with_examples(name)]


def test_the_walk_finds_the_modules_with_examples() -> None:
    expected = {
        "geon.core.zspace.ipf",
        "geon.core.checks",
        "geon.core.ops.dispatch",
        "geon.core.editops",
        "geon.graphs.edits",
        "geon.graphs.protocol_schema",
        "geon.graphs.services.documents",
        "geon.runs.feed",
    }
    assert expected <= set(MODULES)


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples_run(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0

"""The run panel's JAX engine (issue 31), in headless Chromium against a live Daphne and a real
Celery worker: where jax is installed the run mode offers "jax (placed plan)", and a run of the
placed transformer on it shows its output with the difference from the logical run; "Verify plan
with XLA" shows geon's predicted collectives beside those XLA compiled, each with its rule."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from geon.core.plans import apply_plan
from geon.examples.transformer import PLANS, transformer_block
from geon.graphs.services import do_create_graph
from tests.browser.helpers import ARTIFACTS, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def placed(user: Any) -> Any:
    document = apply_plan(transformer_block(), PLANS[1]).to_json()
    return do_create_graph(owner=user, title="Megatron block", document=document)


@pytest.fixture
def user_graph_worse(user: Any) -> Any:
    """The transformer under the worse-on-purpose plan (D over tp)."""
    document = apply_plan(transformer_block(), PLANS[2]).to_json()
    return do_create_graph(owner=user, title="Worse block", document=document)


def test_a_run_on_jax_shows_the_output_and_its_difference_from_the_logical_run(
    daphne_server: str,
    celery_worker: Any,
    user: Any,
    password: str,
    placed: Any,
    page: tuple[Page, list[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("XLA_FLAGS", "")  # the worker (a thread here) forces its host devices
    tab, errors = page
    sign_in(tab, daphne_server, "ann", password)
    tab.goto(f"{daphne_server}/graphs/{placed.pk}/")
    tab.wait_for_function("() => window.geon && window.geon.state().version !== null")
    tab.wait_for_selector(".geon-run-mode option[value=jax]", state="attached")
    tab.select_option(".geon-run-mode", "jax")
    tab.click(".geon-run-go")
    tab.wait_for_selector(".geon-run-panel[data-status=done]", timeout=60_000)
    tab.wait_for_selector(".geon-result[data-key=y] .geon-result-diff")
    assert "on jax" in tab.inner_text(".geon-run-line")
    diff = tab.inner_text(".geon-result[data-key=y] .geon-result-diff")
    assert diff.startswith("jax vs logical: max |Δ| = ")
    assert float(tab.get_attribute(".geon-result[data-key=y]", "data-diff") or "1") < 1e-12
    tab.locator(".geon-run-panel").screenshot(path=str(ARTIFACTS / "run-jax.png"))
    assert errors == []


def test_verify_shows_predicted_beside_compiled_collectives(
    daphne_server: str,
    celery_worker: Any,
    user: Any,
    password: str,
    user_graph_worse: Any,
    page: tuple[Page, list[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("XLA_FLAGS", "")
    tab, errors = page
    sign_in(tab, daphne_server, "ann", password)
    tab.goto(f"{daphne_server}/graphs/{user_graph_worse.pk}/")
    tab.wait_for_function("() => window.geon && window.geon.state().version !== null")
    tab.set_viewport_size({"width": 1400, "height": 1500})
    tab.click(".geon-verify-go")
    tab.wait_for_selector(".geon-verify-table", timeout=60_000)
    verdict = tab.inner_text(".geon-verify-verdict")
    assert verdict == "6 predicted, 8 compiled on 2 devices: agrees"
    rules = tab.eval_on_selector_all(
        ".geon-verify-table tbody tr td:first-child", "(cells) => cells.map((c) => c.textContent)"
    )
    assert set(rules) == {"equal", "xla-combines", "layer-norm-statistics"}
    tab.locator(".geon-verify").screenshot(path=str(ARTIFACTS / "verify.png"))
    assert errors == []

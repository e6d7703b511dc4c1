"""The REST API's documentation page in a browser (issue 21: "/api/v1/docs is blank because
Swagger UI loads from a CDN"): Swagger UI, served by this site, draws every operation of the
OpenAPI document, no request leaves the site and the page reports no error."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

import pytest
from playwright.sync_api import Page, Request

from tests.browser.helpers import screenshots, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_api_docs_draw_every_operation_from_this_site_alone(
    daphne_server: str, user: Any, password: str, page: tuple[Page, list[str]]
) -> None:
    tab, errors = page
    requested: list[str] = []

    def seen(request: Request) -> None:
        requested.append(request.url)

    sign_in(tab, daphne_server, "ann", password)
    tab.on("request", seen)
    tab.goto(f"{daphne_server}/api/v1/docs")
    # then Swagger UI draws the operations of the OpenAPI document
    tab.wait_for_selector(".opblock", timeout=30_000)
    spec = tab.evaluate("fetch('/api/v1/openapi.json').then((r) => r.json())")
    operations = sum(len(methods) for methods in spec["paths"].values())
    assert tab.locator(".opblock").count() == operations
    assert tab.locator(".opblock-summary-path", has_text="/api/v1/graphs/{graph_id}").count() > 0
    screenshots(tab, "api-docs")("01-operations")
    # and nothing came from anywhere but this site
    site = urlparse(daphne_server).netloc
    assert [u for u in requested if urlparse(u).netloc not in (site, "")] == []
    assert errors == []

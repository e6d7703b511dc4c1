"""Schema-driven fuzzing of ``/api/v1/`` (issue 6): schemathesis generates requests from the
OpenAPI document and sends them to a live Daphne on loopback, signed in with an API token. No
answer may be a server error, and every answer must match the schema the document declares.

Revoking tokens is fuzzed with another user's token, so the generated ids never revoke the token
the rest of the run uses (ann's ids are "not found" to bob).

Bounded: ``MAX_EXAMPLES`` requests per operation (a few hundred in all). Hypothesis drives each
operation's strategy directly (schemathesis' lazy pytest loader does not run under this pytest).
"""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from geon.accounts.models import ApiToken

MAX_EXAMPLES = 15


@pytest.mark.django_db(transaction=True)
def test_no_server_error_and_no_schema_violation(
    daphne_server: str, user: Any, other_user: Any, graph: Any
) -> None:
    # given ann, who owns a graph, with an API token, and the served OpenAPI document
    _, token = ApiToken.issue(user, "fuzz")
    _, revoker = ApiToken.issue(other_user, "revoker")
    schema = schemathesis.openapi.from_url(f"{daphne_server}/api/v1/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    sent: list[str] = []

    # when every operation gets generated requests
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=MAX_EXAMPLES,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            derandomize=True,
            database=None,
        )
        def fuzz(case: Any) -> None:
            sent.append(case.operation.label)
            revoking = case.operation.label == "DELETE /api/v1/tokens/{token_id}"
            case.call_and_validate(
                base_url=daphne_server,
                headers={"Authorization": f"Bearer {revoker if revoking else token}"},
                checks=[not_a_server_error, response_schema_conformance],
                timeout=30,
            )

        # then none fails a check (a failure raises, naming the request and the check)
        fuzz()
    assert len(operations) >= 15
    assert len(sent) >= 3 * len(operations)
    assert "DELETE /api/v1/tokens/{token_id}" in sent
    assert ApiToken.objects.filter(user=user, name="fuzz").count() == 1

"""REST endpoint for training steps (issue 32, DESIGN.md §11), mounted in :mod:`geon.urls`
beside the graphs router:

- ``POST /graphs/<id>/training-step {optimizer, lr, loss?}``: a new graph of the caller's
  holding the training step of a graph they may view (its current document), titled
  "<title> (training step)", answered 201 with the new graph as ``GET /graphs/<id>`` shows it.

The options and the document's size are checked before any work: an unknown optimizer or a
learning rate outside ``(0, 1e6]`` is refused 422 naming the value, and a document of more than
``GEON_TRAIN_WEB_MAX_OPERATIONS`` operations (default 2,000: about 5 s of derivation, the
12-layer encoder's 614 take 1.4 s) is refused 422 pointing to ``geon train``, which takes up to
20,000. A document the step cannot be derived from (no variables, a loss that is not a scalar,
a placed plan...) is refused 422 with the reason, and a step larger than a request may be
(``GEON_MAX_REQUEST_BYTES``) 422 with both sizes; nothing is stored. Someone with no role on
the graph gets 404, as for one that does not exist.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from ninja import Router, Schema, Status
from pydantic import Field

from geon.core.autodiff import OPTIMIZERS, training_step
from geon.core.autodiff.step import check_options
from geon.core.graph import OPERATION
from geon.envelope import answers, error_response
from geon.graphs.api import GraphOut, detail
from geon.graphs.services.access import check_can_view
from geon.graphs.services.documents import live_document, over_request_size
from geon.graphs.services.graphs import TITLE_MAX, do_create_graph

router = Router(tags=["training"])

SUFFIX = " (training step)"


class TrainingStepIn(Schema):
    optimizer: str = Field("sgd", description=f"one of {', '.join(OPTIMIZERS)}")
    lr: float = Field(description="the learning rate, in (0, 1e6]")
    loss: str = Field("loss", max_length=200, description="the label of the scalar loss")


def max_web_operations() -> int:
    """``GEON_TRAIN_WEB_MAX_OPERATIONS`` (geon.settings, from the environment), default 2,000."""
    return int(settings.GEON_TRAIN_WEB_MAX_OPERATIONS)


@router.post("/graphs/{graph_id}/training-step", response=answers({201: GraphOut}))
def make_training_step(
    request: HttpRequest, graph_id: str, payload: TrainingStepIn
) -> Status[dict[str, Any]] | HttpResponse:
    """A new graph of yours holding the training step (forward, backward, optimizer update) of
    a graph you may view."""
    check_options(payload.optimizer, payload.lr)
    original = check_can_view(request.user, graph_id)
    document = live_document(original).document
    operations = len(document.of_type(OPERATION))
    if operations > max_web_operations():
        return error_response(
            422,
            "too_large",
            f"the graph has {operations:,} operations; the web derives the training step of at "
            f"most {max_web_operations():,} (export the graph and run geon train, which takes "
            "up to 20,000)",
        )
    step = training_step(document, optimizer=payload.optimizer, lr=payload.lr, loss=payload.loss)
    too_big = over_request_size(step.to_json())
    if too_big is not None:
        return error_response(
            422,
            "too_large",
            f"the training step is {too_big[0]:,} bytes of JSON; a stored document is at most "
            f"{too_big[1]:,} (derive it with geon train)",
        )
    with transaction.atomic():
        graph = do_create_graph(
            owner=request.user,  # type: ignore[arg-type]
            title=original.title[: TITLE_MAX - len(SUFFIX)].rstrip() + SUFFIX,
            document=step.to_json(),
            description=original.description,
            message=f'training step ({payload.optimizer}, lr {payload.lr:g}) of "{original.title}"',
        )
    return Status(201, detail(graph, request.user))

"""The "Reviews for me" page: the signed-in user's notifications (the inbox, docs/reviews.md
"Notifications"), the open reviews that ask them, and those they opened, each linked to its
graph's editor with the review shown."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from geon.reviews.services import notifications, reading


@login_required
def reviews_page(request: HttpRequest) -> HttpResponse:
    asked, opened = reading.reviews_for(request.user), reading.reviews_by(request.user)
    for review in [*asked, *opened]:
        review["stateLabel"] = review["state"].replace("_", " ")
    inbox = notifications.list_for(request.user)  # type: ignore[arg-type]
    mail = notifications.get_settings(request.user)  # type: ignore[arg-type]
    return render(
        request,
        "reviews/for_me.html",
        {"asked": asked, "opened": opened, "inbox": inbox, "mail": mail},
    )

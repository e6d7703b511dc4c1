"""The "Reviews for me" page: the open reviews that ask the signed-in user, and those they
opened, each linked to its graph's editor with the review shown."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from geon.reviews.services import reading


@login_required
def reviews_page(request: HttpRequest) -> HttpResponse:
    asked, opened = reading.reviews_for(request.user), reading.reviews_by(request.user)
    for review in [*asked, *opened]:
        review["stateLabel"] = review["state"].replace("_", " ")
    return render(request, "reviews/for_me.html", {"asked": asked, "opened": opened})

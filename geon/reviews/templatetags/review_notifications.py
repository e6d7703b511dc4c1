"""The nav's badge of unread notifications (docs/reviews.md, Notifications):
``{% load review_notifications %}{% unread_badge user %}`` beside the Reviews link."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.html import format_html

from geon.reviews.services.notifications import unread_count

register = template.Library()


@register.simple_tag
def unread_badge(user: Any) -> str:
    """A badge with the user's unread notifications, or nothing when there are none."""
    count = unread_count(user)
    if not count:
        return ""
    shown = "99+" if count > 99 else str(count)
    return format_html(
        '<span class="badge geon-unread" title="{} unread notification{}">{}</span>',
        count,
        "" if count == 1 else "s",
        shown,
    )

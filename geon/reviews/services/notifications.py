"""Notifications of reviews (docs/reviews.md, Notifications): a row per person and event, the
inbox's REST answers, live delivery to the person's open websockets, and mail.

Kinds: ``review_requested`` (asked, or asked again), ``mentioned`` (``@username`` in a thread or
reply), ``replied`` (a reply in a thread one wrote or replied in), ``verdict`` (a verdict on a
review one opened or is asked by) and ``stale`` (an approval one gave, or of one's review, went
stale). Requests, mentions and verdicts are also mailed, through Django's mail, to the address
allauth verified (the primary one first), unless the person muted mail; a mention of someone
with no verified address says so to its writer (``notices``). Each carries a permalink,
``/graphs/<id>/?review=<rid>[&thread=<tid>]``; mail makes it absolute with the site's address as
the request that caused it reached the server (:data:`site_base`).

Live delivery: every signed-in websocket of a graph also listens on its user's channel-layer
group (:func:`geon.graphs.services.publishing.user_group`); a notification is published there as
``notification.event`` once its write commits, which the consumer hands to
:data:`NOTIFICATION_FEED` and sends as ``{"type": "notification", "notification", "unread"}``.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Hashable, Iterable
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.contrib.auth.models import User as Account
from django.core.mail import send_mail
from django.db import transaction

from geon.core.errors import GeonError, quote
from geon.graphs.services.access import User, roles_on, visible_graphs
from geon.graphs.services.feeds import Feed
from geon.graphs.services.publishing import user_group
from geon.graphs.services.sharing import confirmed_addresses
from geon.reviews.models import Notification, NotificationSettings, Review, Thread

log = logging.getLogger(__name__)

Kind = Notification.Kind

#: The kinds that are mailed (unless the person muted mail).
MAILED = frozenset({Kind.REVIEW_REQUESTED, Kind.MENTIONED, Kind.VERDICT})
#: The most notifications the inbox answers (newest first); older ones stay counted as unread.
LISTED_MAX = 100
#: The most ids one ``read`` request names.
READ_IDS_MAX = 500

#: The site's address (``https://host/``) as the current request reached it: mail's links.
site_base: contextvars.ContextVar[str] = contextvars.ContextVar("site_base", default="")


def permalink(graph_id: Any, review_id: int, thread_id: int | None = None) -> str:
    """The editor's address that opens a review (and a thread of it)."""
    url = f"/graphs/{graph_id}/?review={review_id}"
    return url if thread_id is None else f"{url}&thread={thread_id}"


def notification_json(found: Notification) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": found.pk,
        "kind": found.kind,
        "graph": str(found.graph_id),
        "review": found.review_id,
        "text": found.text,
        "url": permalink(found.graph_id, found.review_id, found.thread_id),
        "read": found.read,
        "created": found.created.isoformat(),
    }
    if found.thread_id is not None:
        out["thread"] = found.thread_id
    return out


def _visible(user: User) -> Any:
    """``user``'s notifications on graphs they may still see (one who lost their role on a
    graph reads nothing more of it, not even its title in an old notification): one query."""
    rows = Notification.objects.filter(user_id=user.pk or 0)  # an anonymous user has none
    return rows.filter(graph_id__in=visible_graphs(user).values("pk"))


def unread_count(user: User) -> int:
    if not user.is_authenticated:
        return 0
    return int(_visible(user).filter(read=False).count())


def list_for(user: Account) -> dict[str, Any]:
    """The inbox: the newest :data:`LISTED_MAX` notifications of ``user`` on graphs they may
    still see, and the unread count."""
    rows = _visible(user)[:LISTED_MAX]
    return {"items": [notification_json(n) for n in rows], "unread": unread_count(user)}


def do_mark_read(user: Account, ids: Any, everything: Any) -> dict[str, Any]:
    """Mark ``ids`` (the caller's notifications), or every one (``everything`` true), read;
    a bad or unknown id changes nothing."""
    if everything is not None and everything is not True:
        raise GeonError(f"all {quote(everything)} is not valid; expected true, or ids instead")
    if everything is True:
        if ids is not None:
            raise GeonError('give "ids" or "all": true, not both')
        Notification.objects.filter(user_id=user.pk, read=False).update(read=True)
        return list_for(user)
    if not isinstance(ids, list) or not ids:
        raise GeonError(
            f'ids {quote(ids)} is not valid; expected a list of notification ids, or "all": true'
        )
    if len(ids) > READ_IDS_MAX:
        raise GeonError(f"ids has {len(ids)} entries; at most {READ_IDS_MAX} at once")
    bad = [i for i in ids if isinstance(i, bool) or not isinstance(i, int)]
    if bad:
        raise GeonError(f"id {quote(bad[0])} is not valid; expected a notification's number")
    found = set(_visible(user).filter(pk__in=ids).values_list("pk", flat=True))
    missing = [i for i in dict.fromkeys(ids) if i not in found]
    if missing:
        raise GeonError(f'notification "{missing[0]}" is not one of yours; nothing was marked')
    Notification.objects.filter(user_id=user.pk, pk__in=ids).update(read=True)
    return list_for(user)


def mail_on(user: Account) -> bool:
    found = NotificationSettings.objects.filter(user=user).first()
    return True if found is None else found.mail


def get_settings(user: Account) -> dict[str, Any]:
    return {"mail": mail_on(user), "addresses": confirmed_addresses(user)}


def do_change_settings(user: Account, changes: dict[str, Any]) -> dict[str, Any]:
    """Mute (``{"mail": false}``) or unmute a person's notification mail."""
    for name, value in changes.items():
        if name != "mail":
            raise GeonError(f'setting {quote(name)} is not known; expected "mail"')
        if not isinstance(value, bool):
            raise GeonError(f"mail {quote(value)} is not valid; expected true or false")
        NotificationSettings.objects.update_or_create(user_id=user.pk, defaults={"mail": value})
    return get_settings(user)


def mail_address(user: Account) -> str | None:
    """The address allauth verified for ``user`` (the primary one if verified), or None."""
    from allauth.account.models import EmailAddress

    rows = EmailAddress.objects.filter(user=user, verified=True).order_by("-primary", "pk")
    first = rows.values_list("email", flat=True).first()
    return first or None


def _published(user_id: int, found: Notification) -> None:
    item = {**notification_json(found), "unread": None}

    def send() -> None:
        layer = get_channel_layer()
        if layer is None:
            return
        item["unread"] = Notification.objects.filter(user_id=user_id, read=False).count()
        event = {"type": NOTIFICATION_FEED.event, NOTIFICATION_FEED.item: item}
        try:
            async_to_sync(layer.group_send)(user_group(user_id), event)
        except Exception:  # a channel layer's failure must not fail the write that committed
            log.exception("publishing notification %s failed", found.pk)

    transaction.on_commit(send)


def _mailed(user: Account, subject: str, text: str, url: str) -> None:
    address = mail_address(user)
    if address is None or not mail_on(user):
        return
    body = (
        f"{text}\n\nOpen it: {site_base.get().rstrip('/')}{url}\n\n— geon (mute this mail "
        "under Notifications on the Reviews page)"
    )

    def send() -> None:
        try:
            send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, [address])
        except Exception:  # a mail server's failure must not undo the review's write
            log.exception("sending review mail %r failed", subject)

    transaction.on_commit(send)


def notify(
    people: Iterable[Account | None],
    kind: str,
    review: Review,
    actor: Account | None,
    text: str,
    *,
    thread: Thread | None = None,
    mail: str = "",
) -> list[Notification]:
    """One notification of ``kind`` per person with a role on the graph (never the actor, None
    for a change nobody made, such as an approval going stale; once each), told live once
    committed; kinds in :data:`MAILED` are also mailed (``mail``: the mail's text, ``text``
    when empty)."""
    made = []
    seen: set[int] = {actor.pk} if actor is not None else set()
    listed = [p for p in people if p is not None]
    roles = roles_on(listed, review.graph) if listed else {}
    for person in listed:
        # never to someone who has lost their role on the graph (a thread's old writer)
        if person.pk in seen or roles.get(person.pk) is None:
            continue
        seen.add(person.pk)
        found = Notification.objects.create(
            user=person,
            kind=kind,
            graph_id=review.graph_id,
            review=review,
            thread=thread,
            actor=actor,
            text=text[:500],
        )
        _published(person.pk, found)
        if kind in MAILED:
            _mailed(person, text[:200], mail or text, notification_json(found)["url"])
        made.append(found)
    return made


def unmailed_mentions(people: Iterable[Account]) -> list[str]:
    """What the writer of a mention is told of each mentioned person mail cannot reach."""
    return [
        f"@{p.get_username()} has no verified email address: they see the mention in their "
        "inbox only"
        for p in people
        if mail_address(p) is None
    ]


def _position(item: dict[str, Any]) -> tuple[Hashable, tuple[int]]:
    return ("notification", item["id"]), (0,)


def _message(item: dict[str, Any]) -> dict[str, Any]:
    shown = {k: v for k, v in item.items() if k != "unread"}
    return {"type": "notification", "notification": shown, "unread": item["unread"]}


NOTIFICATION_FEED = Feed(
    name="notifications",
    event="notification.event",
    item="notification",
    position=_position,
    message=_message,
)

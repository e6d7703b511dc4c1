"""Sign-in throttling: failed sign-ins are counted per username and per client address.

Once ``GEON_SIGNIN_FAILURES_PER_ACCOUNT`` failures for one username, or
``GEON_SIGNIN_FAILURES_PER_ADDRESS`` from one address, fall within ``GEON_SIGNIN_WINDOW_SECONDS``
of the first, every further try of that username or from that address is refused until the
window ends, even one with the right password. A username is counted whether or not an account
has it, so the refusal tells nothing about which accounts exist. A successful sign-in clears its
username's count, never its address's (else one's own account would reset an attacker's count).

The counts live in Django's default cache: Redis when ``REDIS_URL`` is set (shared by every web
process), otherwise the one web process's memory.
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest


@dataclass(frozen=True)
class Counter:
    """Failures under one cache key: a count, and when its window started."""

    key: str
    limit: int

    def retry_after(self, now: float) -> int:
        """Seconds until tries are allowed again; 0 while the count is under the limit."""
        found = cache.get_many([f"{self.key}:n", f"{self.key}:t"])
        if int(found.get(f"{self.key}:n", 0)) < self.limit:
            return 0
        started = float(found.get(f"{self.key}:t", now))
        return max(1, math.ceil(started + settings.GEON_SIGNIN_WINDOW_SECONDS - now))

    def add_failure(self, now: float) -> None:
        """Count one failure; the first one starts the window."""
        window = settings.GEON_SIGNIN_WINDOW_SECONDS
        cache.add(f"{self.key}:t", now, window)
        cache.add(f"{self.key}:n", 0, window)
        try:
            cache.incr(f"{self.key}:n")
        except ValueError:  # the window ended between add and incr
            cache.set_many({f"{self.key}:t": now, f"{self.key}:n": 1}, window)

    def clear(self) -> None:
        """Forget the failures."""
        cache.delete_many([f"{self.key}:n", f"{self.key}:t"])


@dataclass(frozen=True)
class SignInThrottle:
    """The counters a sign-in of ``username`` from ``address`` falls under."""

    account: Counter
    address: Counter

    @classmethod
    def of(cls, request: HttpRequest | None, username: str) -> SignInThrottle:
        """The throttle of a sign-in request (the address is the client's, as the server saw
        it) for the username typed, compared without case."""
        name = hashlib.sha256(username.strip().casefold().encode()).hexdigest()
        address = (request.META.get("REMOTE_ADDR") if request is not None else None) or "unknown"
        return cls(
            Counter(f"signin:account:{name}", settings.GEON_SIGNIN_FAILURES_PER_ACCOUNT),
            Counter(f"signin:address:{address}", settings.GEON_SIGNIN_FAILURES_PER_ADDRESS),
        )

    def retry_after(self) -> int:
        """Seconds until this sign-in may be tried; 0 when it may be tried now."""
        now = time.time()
        return max(self.account.retry_after(now), self.address.retry_after(now))

    def failed(self) -> None:
        """Count a failed try."""
        now = time.time()
        self.account.add_failure(now)
        self.address.add_failure(now)

    def succeeded(self) -> None:
        """Forget the username's failures (the address keeps its count)."""
        self.account.clear()


def refusal_message(seconds: int) -> str:
    """What a throttled sign-in is told: why, and when to try again.

    >>> refusal_message(61)
    'Too many failed sign-in attempts. Try again in 2 minutes.'
    >>> refusal_message(1)
    'Too many failed sign-in attempts. Try again in 1 second.'
    """
    if seconds >= 60:
        minutes = math.ceil(seconds / 60)
        wait = f"{minutes} minute{'s' if minutes != 1 else ''}"
    else:
        wait = f"{seconds} second{'s' if seconds != 1 else ''}"
    return f"Too many failed sign-in attempts. Try again in {wait}."

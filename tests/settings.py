"""The settings the suite runs under, in the test process and in every child it starts (Daphne,
the Celery workers, ``geon serve``): geon's own, with a fast password hasher and, on Redis, cache
keys of the session's own.

Django's PBKDF2 takes 1,000,000 iterations, 0.2 to 0.4 s a password on CI's two cores, and
almost every database test makes a user (``user``, ``other_user``) or signs one in, the browser
stories through Daphne: seconds a file, minutes a pass. No test is about the hasher's strength;
the sign-in, throttle and token tests run the same code paths with MD5.

With ``REDIS_URL`` the caches (sign-in failure counts, plan costs) live in Redis, which outlives
a run: a second run within the throttle's window found the first one's failures and was refused
at once. Each session's keys carry its Celery queue's name (``geon-tests-<pid>``, which the
children inherit), so a run starts from no counts, as it does in memory.

``tests/conftest.py`` points ``DJANGO_SETTINGS_MODULE`` here before Django loads.
"""

import os

from geon.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

_SESSION = os.environ.get("GEON_CELERY_QUEUE", "geon-tests")
for _cache in CACHES.values():  # noqa: F405
    if "KEY_PREFIX" in _cache:
        _cache["KEY_PREFIX"] = f"{_cache['KEY_PREFIX']}:{_SESSION}"

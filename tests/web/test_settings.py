"""Settings come from the environment; a bad value stops start-up with a message naming it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from geon.settings import env_bool, env_choice, env_int, env_list, env_url

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("label", "call", "expected"),
    [
        ("bool yes", lambda: env_bool("B", False, environ={"B": " Yes "}), True),
        ("bool off", lambda: env_bool("B", True, environ={"B": "off"}), False),
        ("bool empty is no", lambda: env_bool("B", True, environ={"B": ""}), False),
        ("bool unset", lambda: env_bool("B", True, environ={}), True),
        ("int", lambda: env_int("N", 1, environ={"N": "4"}), 4),
        ("int unset", lambda: env_int("N", 1, environ={}), 1),
        ("list", lambda: env_list("L", [], environ={"L": "a.org, b.org"}), ["a.org", "b.org"]),
        ("list unset", lambda: env_list("L", ["x"], environ={}), ["x"]),
        (
            "choice",
            lambda: env_choice("C", "INFO", ("INFO", "DEBUG"), environ={"C": "debug"}),
            "DEBUG",
        ),
        ("url", lambda: env_url("U", ("redis",), environ={"U": "redis://h:1/0"}), "redis://h:1/0"),
        ("url empty", lambda: env_url("U", ("redis",), environ={"U": " "}), None),
    ],
)
def test_helpers_read_valid_values(label: str, call: object, expected: object) -> None:
    assert call() == expected  # type: ignore[operator]


@pytest.mark.parametrize(
    ("label", "call", "message"),
    [
        (
            "bool",
            lambda: env_bool("GEON_DEBUG", False, environ={"GEON_DEBUG": "maybe"}),
            'GEON_DEBUG="maybe" is not a yes/no value; expected one of 1, true, yes, on, '
            "0, false, no, off",
        ),
        (
            "int not a number",
            lambda: env_int("N", 2, minimum=1, environ={"N": "two"}),
            'N="two" is not a whole number >= 1; expected e.g. N="2"',
        ),
        (
            "int too small",
            lambda: env_int("N", 2, minimum=1, environ={"N": "0"}),
            'N="0" is not a whole number >= 1; expected e.g. N="2"',
        ),
        (
            "list with an empty item",
            lambda: env_list("ALLOWED_HOSTS", [], environ={"ALLOWED_HOSTS": "a,,b"}),
            'ALLOWED_HOSTS="a,,b" has an empty item; expected comma-separated values such as '
            '"example.org,www.example.org"',
        ),
        (
            "choice",
            lambda: env_choice(
                "GEON_LOG_LEVEL", "INFO", ("INFO", "DEBUG"), environ={"GEON_LOG_LEVEL": "loud"}
            ),
            'GEON_LOG_LEVEL="loud" is not valid; expected one of INFO, DEBUG',
        ),
        (
            "url scheme",
            lambda: env_url("REDIS_URL", ("redis", "rediss"), environ={"REDIS_URL": "http://h"}),
            'REDIS_URL="http://h" is not a valid URL; expected one of redis://..., rediss://...',
        ),
    ],
)
def test_helpers_name_the_bad_variable_and_value(label: str, call: object, message: str) -> None:
    with pytest.raises(ImproperlyConfigured) as raised:
        call()  # type: ignore[operator]
    assert str(raised.value) == message


def load_settings(**env: str | None) -> subprocess.CompletedProcess[str]:
    """Import the settings in a fresh interpreter with these variables (None removes one)."""
    full = dict(os.environ)
    for name, value in env.items():
        if value is None:
            full.pop(name, None)
        else:
            full[name] = value
    code = (
        "from django.conf import settings as s; "
        "print(s.DEBUG, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_SSL_REDIRECT, "
        "s.DATABASES['default']['ENGINE'], s.CHANNEL_LAYERS['default']['BACKEND'], "
        "s.CELERY_BROKER_URL)"
    )
    return subprocess.run(
        [sys.executable, "-c", code], env=full, cwd=ROOT, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    ("label", "env", "message"),
    [
        (
            "no secret key in production",
            {"SECRET_KEY": None, "GEON_DEBUG": "0"},
            "SECRET_KEY is not set; set it to a long random string (make run keeps one in "
            "GEON_DATA_DIR/secret_key), or set GEON_DEBUG=1 for a local debugging session",
        ),
        (
            "debug flag that is not yes or no",
            {"GEON_DEBUG": "perhaps"},
            'GEON_DEBUG="perhaps" is not a yes/no value; expected one of 1, true, yes, on, '
            "0, false, no, off",
        ),
        (
            "database URL of an unsupported kind",
            {"DATABASE_URL": "mysql://db/geon"},
            'DATABASE_URL="mysql://db/geon" is not a valid URL; expected one of postgres://..., '
            "postgresql://..., sqlite://...",
        ),
        (
            "HTTPS flag that is not yes or no",
            {"GEON_HTTPS": "sometimes"},
            'GEON_HTTPS="sometimes" is not a yes/no value; expected one of 1, true, yes, on, '
            "0, false, no, off",
        ),
    ],
)
def test_bad_settings_stop_start_up_with_a_clear_message(
    label: str, env: dict[str, str | None], message: str
) -> None:
    # when the settings load with a bad variable
    done = load_settings(**env)
    # then start-up fails and the last line names the variable (no wall of traceback to read)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        f"django.core.exceptions.ImproperlyConfigured: {message}"
    )


@pytest.mark.parametrize(
    ("label", "env", "expected"),
    [
        (
            "embedded defaults",
            {"GEON_HTTPS": None, "DATABASE_URL": None, "REDIS_URL": None},
            "False False False False django.db.backends.sqlite3 "
            "channels.layers.InMemoryChannelLayer geonfs://",
        ),
        (
            "behind TLS with the real services",
            {
                "GEON_HTTPS": "1",
                "DATABASE_URL": "postgres://u@db:5432/geon",
                "REDIS_URL": "redis://cache:6379/0",
            },
            "False True True True django.db.backends.postgresql "
            "geon.channel_layer.CancellableRedisChannelLayer redis://cache:6379/0",
        ),
    ],
)
def test_settings_follow_the_environment(
    label: str, env: dict[str, str | None], expected: str
) -> None:
    done = load_settings(**env)
    assert (done.returncode, done.stdout.strip()) == (0, expected)

"""``manage.py create_token USERNAME [--name NAME] [--days N]``: print a new API token for a user.

The token expires after ``--days`` (default ``GEON_API_TOKEN_DAYS``); an operator on the server
may choose any lifetime, the REST API at most ``GEON_API_TOKEN_MAX_DAYS``.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from geon.accounts.models import ApiToken


class Command(BaseCommand):
    help = "Create an API token for a user and print it (it is shown only once)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", default="script")
        parser.add_argument(
            "--days", type=int, default=None, help="days until it expires (default: 90)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f'user "{options["username"]}" does not exist; create it first')
        days = options["days"]
        if days is not None and days < 1:
            raise CommandError(f"--days {days} is not a number of days; expected 1 or more")
        _, key = ApiToken.issue(user, options["name"], days)
        self.stdout.write(key)

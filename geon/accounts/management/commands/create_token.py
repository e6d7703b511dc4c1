"""``manage.py create_token USERNAME [--name NAME]``: print a new API token for a user."""

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

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f'user "{options["username"]}" does not exist; create it first')
        _, key = ApiToken.issue(user, options["name"])
        self.stdout.write(key)

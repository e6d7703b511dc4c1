"""``manage.py load_gallery --owner demo``: give a user the example graphs (idempotent)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from geon.graphs.services import do_load_gallery


class Command(BaseCommand):
    help = "Load the example gallery into a user's graphs; examples already there are kept."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--owner", required=True, help="username that will own the graphs")

    def handle(self, *args: Any, **options: Any) -> None:
        username = options["owner"]
        owner = get_user_model().objects.filter(username=username).first()
        if owner is None:
            raise CommandError(
                f'user "{username}" does not exist; create it first, e.g. with '
                "manage.py ensure_demo_user"
            )
        loaded = do_load_gallery(owner)
        added = sum(created for _, created in loaded)
        self.stdout.write(
            f"gallery: {added} example(s) added, {len(loaded) - added} already there "
            f'for "{username}"'
        )

"""``manage.py ensure_demo_user``: make sure the local demo account exists; print its login."""

from __future__ import annotations

import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser


class Command(BaseCommand):
    help = "Create the local demo account (or set its password) and print its login."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", default="demo")
        parser.add_argument(
            "--password",
            default="",
            help="its password (default: a new random one); make run keeps one in the data folder",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        username: str = options["username"]
        password: str = options["password"] or secrets.token_urlsafe(9)
        user, created = get_user_model().objects.get_or_create(username=username)
        if created or not user.check_password(password):
            # Setting the same password again would sign the user out everywhere; skip it.
            user.set_password(password)
            user.save()
            state = "created" if created else "password set"
        else:
            state = "ready"
        self.stdout.write(f"demo account {state} - login: {username}  password: {password}")

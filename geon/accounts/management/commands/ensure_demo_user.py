"""``manage.py ensure_demo_user``: create (or reset) the local demo account and print its login."""

from __future__ import annotations

import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser


class Command(BaseCommand):
    help = "Create the local demo account (or reset its password) and print its login."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", default="demo")
        parser.add_argument(
            "--password", default="", help="the password to set (default: a new random one)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        username: str = options["username"]
        password: str = options["password"] or secrets.token_urlsafe(9)
        user, created = get_user_model().objects.get_or_create(username=username)
        user.set_password(password)
        user.save()
        verb = "created" if created else "password reset"
        self.stdout.write(f"demo account {verb} - login: {username}  password: {password}")

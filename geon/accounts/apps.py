from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Users and sign-in, teams with roles, and API tokens for scripts."""

    name = "geon.accounts"
    label = "accounts"

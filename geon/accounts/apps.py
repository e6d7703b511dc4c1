from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Users and sign-in. Teams and per-graph roles come with the server issue."""

    name = "geon.accounts"
    label = "accounts"

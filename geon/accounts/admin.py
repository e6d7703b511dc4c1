"""The admin of API tokens, and the admin's throttled sign-in.

Teams and their members are in the admin too, registered by :mod:`geon.graphs.admin`: changing
them changes who may open the team's graphs, and the graphs' open websockets must hear of it
(``geon.accounts`` sits below ``geon.graphs`` and cannot tell them).
"""

from django.contrib import admin

from geon.accounts.models import ApiToken
from geon.accounts.views import ThrottledAdminSignIn

# The admin's sign-in is throttled like the login page's.
admin.site.login_form = ThrottledAdminSignIn


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("name", "user", "prefix", "created", "last_used", "expires")
    readonly_fields = ("digest", "prefix", "created", "last_used")

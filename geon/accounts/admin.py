from django.contrib import admin

from geon.accounts.models import ApiToken, Team, TeamMembership
from geon.accounts.views import ThrottledAdminSignIn

# The admin's sign-in is throttled like the login page's.
admin.site.login_form = ThrottledAdminSignIn


class TeamMembershipInline(admin.TabularInline):
    model = TeamMembership
    extra = 1


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ("name", "created")
    inlines = [TeamMembershipInline]


@admin.register(TeamMembership)
class TeamMembershipAdmin(admin.ModelAdmin):
    list_display = ("team", "user", "role")
    list_filter = ("role",)


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("name", "user", "prefix", "created", "last_used", "expires")
    readonly_fields = ("digest", "prefix", "created", "last_used")

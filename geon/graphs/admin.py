from django.contrib import admin

from geon.graphs.models import Graph, GraphVersion, Membership, ShardPlan


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1


@admin.register(Graph)
class GraphAdmin(admin.ModelAdmin):
    list_display = ("title", "owner", "team", "current_version", "updated")
    search_fields = ("title",)
    inlines = [MembershipInline]


@admin.register(GraphVersion)
class GraphVersionAdmin(admin.ModelAdmin):
    """Versions are immutable: the admin shows them and never saves one."""

    list_display = ("graph", "number", "author", "message", "created")
    readonly_fields = (
        "graph",
        "number",
        "snapshot",
        "ops",
        "author",
        "message",
        "touched",
        "created",
    )

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ("graph", "user", "role", "created")
    list_filter = ("role",)


@admin.register(ShardPlan)
class ShardPlanAdmin(admin.ModelAdmin):
    list_display = ("name", "graph", "updated")

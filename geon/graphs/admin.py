"""The admin of graphs, and of teams and their members.

Every admin write that can change who may open a graph (a graph's owner, team, members or
deletion; a team's members or deletion) calls :func:`services.announce_access_changed` for each
graph it touches, inside the admin's transaction, so that the graph's open websockets check
their user's role again once it commits, as they do after the REST API's writes.

The team admins are registered here rather than in :mod:`geon.accounts.admin`: a team change
reaches sockets through the graphs of the team, and ``geon.accounts`` sits below
``geon.graphs`` (``geon.graphs.models`` imports ``geon.accounts.models``), so it cannot call the
graphs' services.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib import admin
from django.contrib.admin.utils import NestedObjects
from django.db import router, transaction
from django.db.models import Model, QuerySet
from django.forms import BaseFormSet, ModelForm
from django.http import HttpRequest

from geon.accounts.models import Team, TeamMembership
from geon.graphs import services
from geon.graphs.models import Graph, GraphVersion, Membership, ShardPlan


def _announce(graph_ids: Iterable[Any]) -> None:
    """Announce an access change once for each graph (inside the current transaction)."""
    for graph_id in dict.fromkeys(graph_ids):
        if graph_id is not None:
            services.announce_access_changed(graph_id)


def _before_and_after(form: ModelForm[Any], field: str) -> list[Any]:
    """The primary keys a foreign key ``field`` named before the form was saved (None when
    it was being added) and after, when the form changed anything (else none)."""
    if not form.has_changed():
        return []
    before = form.initial.get(field)
    after = getattr(form.instance, f"{field}_id")
    return [before.pk if isinstance(before, Model) else before, after]


def _formsets_changed(formsets: Iterable[BaseFormSet[Any]]) -> bool:
    return any(formset.has_changed() for formset in formsets)


class AccessAdmin(admin.ModelAdmin):
    """A model admin whose writes change access to some graphs (:meth:`graphs_of`):
    each save and delete announces it for them, before and after the change."""

    def graphs_of(self, objects: Iterable[Any]) -> list[Any]:
        """The ids of the graphs whose access ``objects`` decide."""
        raise NotImplementedError

    def changed_graphs(self, form: ModelForm[Any], obj: Any, formsets: list[Any]) -> list[Any]:
        """The ids of the graphs whose access a save of ``obj`` changed (none when nothing
        that decides access changed)."""
        raise NotImplementedError

    def save_related(
        self, request: HttpRequest, form: ModelForm[Any], formsets: Any, change: bool
    ) -> None:
        super().save_related(request, form, formsets, change)
        _announce(self.changed_graphs(form, form.instance, list(formsets)))

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        with transaction.atomic():
            _announce(self.graphs_of([obj]))
            super().delete_model(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        with transaction.atomic():
            _announce(self.graphs_of(queryset))
            super().delete_queryset(request, queryset)


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1


@admin.register(Graph)
class GraphAdmin(AccessAdmin):
    list_display = ("title", "owner", "team", "current_version", "updated")
    search_fields = ("title",)
    inlines = [MembershipInline]

    def graphs_of(self, objects: Iterable[Any]) -> list[Any]:
        return [graph.pk for graph in objects]

    def changed_graphs(self, form: ModelForm[Any], obj: Any, formsets: list[Any]) -> list[Any]:
        access = {"owner", "team"}.intersection(form.changed_data)
        return [obj.pk] if access or _formsets_changed(formsets) else []

    def get_deleted_objects(
        self, objs: Any, request: HttpRequest
    ) -> tuple[list[Any], dict[str, int], set[str], list[Any]]:
        """Django's list of what deleting the graphs deletes, less the protection a graph's
        own ``current_version`` gives that version: :func:`services.do_drop_graph` releases
        it before deleting the graph (any other protection still refuses the deletion)."""
        deleted, counts, perms, protected = super().get_deleted_objects(objs, request)
        graphs = {graph.pk for graph in objs}
        collector = NestedObjects(using=router.db_for_write(Graph))
        collector.collect(list(objs))
        if all(isinstance(o, Graph) and o.pk in graphs for o in collector.protected):
            protected = []
        return deleted, counts, perms, protected

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        """As the owner's delete does: with the graph's files, closing its sockets."""
        services.do_drop_graph(obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        with transaction.atomic():
            for graph in queryset:
                services.do_drop_graph(graph)


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
        "edit_id",
        "created",
    )

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False


@admin.register(Membership)
class MembershipAdmin(AccessAdmin):
    list_display = ("graph", "user", "role", "created")
    list_filter = ("role",)

    def graphs_of(self, objects: Iterable[Any]) -> list[Any]:
        return [membership.graph_id for membership in objects]

    def changed_graphs(self, form: ModelForm[Any], obj: Any, formsets: list[Any]) -> list[Any]:
        return _before_and_after(form, "graph")


@admin.register(ShardPlan)
class ShardPlanAdmin(admin.ModelAdmin):
    list_display = ("name", "graph", "updated")


class TeamMembershipInline(admin.TabularInline):
    model = TeamMembership
    extra = 1


def _graphs_of_teams(team_ids: Iterable[Any]) -> list[Any]:
    """The ids of the graphs of the teams."""
    ids = [pk for pk in team_ids if pk is not None]
    return list(Graph.objects.filter(team_id__in=ids).values_list("pk", flat=True))


@admin.register(Team)
class TeamAdmin(AccessAdmin):
    list_display = ("name", "created")
    inlines = [TeamMembershipInline]

    def graphs_of(self, objects: Iterable[Any]) -> list[Any]:
        return _graphs_of_teams(team.pk for team in objects)

    def changed_graphs(self, form: ModelForm[Any], obj: Any, formsets: list[Any]) -> list[Any]:
        # a team's name decides nothing; its members do
        return self.graphs_of([obj]) if _formsets_changed(formsets) else []


@admin.register(TeamMembership)
class TeamMembershipAdmin(AccessAdmin):
    list_display = ("team", "user", "role")
    list_filter = ("role",)

    def graphs_of(self, objects: Iterable[Any]) -> list[Any]:
        return _graphs_of_teams(membership.team_id for membership in objects)

    def changed_graphs(self, form: ModelForm[Any], obj: Any, formsets: list[Any]) -> list[Any]:
        return _graphs_of_teams(_before_and_after(form, "team"))

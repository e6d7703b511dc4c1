"""The graphs services, one topic per module (the Zulip way; DESIGN.md §6): views, the API and
the websocket consumer call them; ``check_*`` validates untrusted input and access, ``do_*``
performs the trusted write and schedules its notifications with ``transaction.on_commit``.

- :mod:`.access`: roles, the ``check_can_*`` gates, visible graphs, access announcements;
- :mod:`.graphs`: create, update, delete, hand over; titles and versions; the drop hooks;
- :mod:`.members`: members and their roles;
- :mod:`.documents`: loading documents, the live document cache, the ``snapshot`` message;
- :mod:`.editing`: edits as new versions (:func:`do_apply_edits`, a group commit);
- :mod:`.rebasing`: one edit's ops on the live document: its limits and the rebase rule;
- :mod:`.queue`: the websocket's edit queue and the timing of deferred snapshots;
- :mod:`.snapshots`: storing the whole document every ``GEON_SNAPSHOT_EVERY`` versions;
- :mod:`.plans`: shard plans, their generation and cost;
- :mod:`.plan_trials`: a plan tried on a document, and the current plan's collectives that
  the last ``applied`` of a commit carries;
- :mod:`.gallery`: the example gallery as a user's graphs;
- :mod:`.presence`: who is connected to each graph, per process;
- :mod:`.publishing`: the channel-layer group of a graph and what is sent to it;
- :mod:`.feeds`: live feeds other apps (runs) show on a graph's websockets.

This package exports what callers outside it use; new code may import the topic modules.
"""

from geon.graphs.services.access import (
    AccessDenied,
    GraphNotFound,
    User,
    announce_access_changed,
    check_can_edit,
    check_can_manage,
    check_can_review,
    check_can_view,
    role_on,
    visible_graphs,
)
from geon.graphs.services.documents import document_issues, live_document, parse_document
from geon.graphs.services.editing import Applied, EditRequest, do_apply_edit, do_apply_edits
from geon.graphs.services.gallery import do_load_example, do_load_gallery
from geon.graphs.services.graphs import (
    VersionNotFound,
    check_description,
    check_title,
    do_create_graph,
    do_delete_graph,
    do_drop_graph,
    do_transfer_graph,
    do_update_graph,
    version_of,
)
from geon.graphs.services.members import check_member, do_remove_member, do_set_member
from geon.graphs.services.plan_trials import check_plan
from geon.graphs.services.plans import (
    do_delete_plan,
    do_generate_plan,
    do_save_plan,
    plan_cost,
    plan_of,
)
from geon.graphs.services.publishing import graph_group
from geon.graphs.services.snapshots import do_store_snapshot, snapshot_due

__all__ = [
    "AccessDenied",
    "Applied",
    "EditRequest",
    "GraphNotFound",
    "User",
    "VersionNotFound",
    "announce_access_changed",
    "check_can_edit",
    "check_can_manage",
    "check_can_review",
    "check_can_view",
    "check_description",
    "check_member",
    "check_plan",
    "check_title",
    "do_apply_edit",
    "do_apply_edits",
    "do_create_graph",
    "do_delete_graph",
    "do_delete_plan",
    "do_drop_graph",
    "do_generate_plan",
    "do_load_example",
    "do_load_gallery",
    "do_remove_member",
    "do_save_plan",
    "do_set_member",
    "do_store_snapshot",
    "do_transfer_graph",
    "do_update_graph",
    "document_issues",
    "graph_group",
    "live_document",
    "parse_document",
    "plan_cost",
    "plan_of",
    "role_on",
    "snapshot_due",
    "version_of",
    "visible_graphs",
]

"""Issues on a diagram (DESIGN.md §7: issues highlighted): which drawn node each error or warning
names, and the label lines and tooltips that say so.

A node named by an error issue is outlined in red and says the issue's summary in its label and
tooltip; warnings are outlined in amber. Issues that name no drawn node (the document envelope)
are *loose*: the caption lists them.

>>> from geon.core.issues import Issue
>>> issue = Issue("Demo", "error", "too long", "the axis is too long", node_ids=("a",))
>>> flags, loose = assign_issues([issue], {"a"})
>>> flags["a"].errors == [issue], loose
(True, [])
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from geon.core.issues import Issue
from geon.render.markup import LINE_CHARS, small
from geon.render.palette import ERROR, WARNING

__all__ = ["Flags", "assign_issues", "issue_lines", "issue_tooltip"]


@dataclass(slots=True)
class Flags:
    """The errors and warnings that name one node."""

    errors: list[Issue] = field(default_factory=list)
    warnings: list[Issue] = field(default_factory=list)

    @property
    def any(self) -> bool:
        return bool(self.errors or self.warnings)


def assign_issues(
    issues: Sequence[Issue], drawn: Collection[str]
) -> tuple[dict[str, Flags], list[Issue]]:
    """The flags of every drawn node (by id) and the loose issues, which name no drawn node;
    issues of other severities are not drawn."""
    flags: dict[str, Flags] = {}
    loose: list[Issue] = []
    for issue in issues:
        if issue.severity not in ("error", "warning"):
            continue
        named = [n for n in issue.node_ids if n in drawn]
        if not named:
            loose.append(issue)
        for node_id in dict.fromkeys(named):
            found = flags.setdefault(node_id, Flags())
            (found.errors if issue.severity == "error" else found.warnings).append(issue)
    return flags, loose


def issue_lines(flags: Flags | None) -> list[str]:
    """Label lines naming the node's first error (or warning) and how many more there are."""
    shown = (flags.errors or flags.warnings) if flags is not None else None
    if flags is None or not shown:
        return []
    colour = ERROR if flags.errors else WARNING
    word = "error" if flags.errors else "warning"
    more = len(flags.errors) + len(flags.warnings) - 1
    tail = f" (+{more} more)" if more else ""
    return [small(f"{word}: {shown[0].summary}{tail}", colour, LINE_CHARS + 16)]


def issue_tooltip(flags: Flags) -> str:
    """Every issue of the node: severity, constraint, summary and message."""
    parts = []
    for issue in flags.errors + flags.warnings:
        parts.append(f"{issue.severity}: {issue.constraint}: {issue.summary}\n{issue.message}")
    return "\n\n".join(parts)

"""Django admin for reviews: to find and read them, and to fix a guardrail setting by hand."""

from __future__ import annotations

from django.contrib import admin

from geon.reviews.models import Comment, Review, ReviewSettings, Thread, Verdict


class ThreadInline(admin.TabularInline):
    model = Thread
    fields = ("anchor_name", "author", "version", "resolved", "applied_version")
    readonly_fields = ("anchor_name", "author", "version", "applied_version")
    extra = 0


class VerdictInline(admin.TabularInline):
    model = Verdict
    fields = ("user", "verdict", "version", "body", "created")
    readonly_fields = ("user", "verdict", "version", "body", "created")
    extra = 0


@admin.register(Review)
class ReviewAdmin(admin.ModelAdmin):
    list_display = ("id", "title", "graph", "plan_name", "author", "closed", "activity", "updated")
    list_filter = ("closed",)
    search_fields = ("title", "graph__title", "author__username")
    raw_id_fields = ("graph", "plan", "author")
    filter_horizontal = ("reviewers",)
    inlines = (ThreadInline, VerdictInline)


@admin.register(Comment)
class CommentAdmin(admin.ModelAdmin):
    list_display = ("id", "thread", "author", "version", "created")
    search_fields = ("body", "author__username")
    raw_id_fields = ("thread", "author")


@admin.register(ReviewSettings)
class ReviewSettingsAdmin(admin.ModelAdmin):
    list_display = (
        "graph", "require_resolved_threads", "block_on_errors", "block_over_capacity", "profile",
    )  # fmt: skip
    raw_id_fields = ("graph",)

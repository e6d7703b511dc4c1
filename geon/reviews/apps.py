from django.apps import AppConfig


class ReviewsConfig(AppConfig):
    """Reviews of a graph's plans (docs/reviews.md).

    ``reviews`` depends on ``graphs``, never the reverse: it plugs its live feed of review
    events into the graphs' websockets here (:mod:`geon.reviews.feed`).
    """

    name = "geon.reviews"
    label = "reviews"

    def ready(self) -> None:
        from geon.graphs.services.feeds import register_feed
        from geon.reviews.feed import REVIEW_FEED
        from geon.reviews.services.notifications import NOTIFICATION_FEED
        from geon.reviews.services.stale import watch_for_stale_approvals

        register_feed(REVIEW_FEED)
        register_feed(NOTIFICATION_FEED)
        watch_for_stale_approvals()

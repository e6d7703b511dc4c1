"""The reviews services, one topic per module (docs/reviews.md): the API calls them.

- :mod:`.reading`: reviews as JSON, read against the current document (stale, outdated);
- :mod:`.checks`: untrusted input — bodies, reviewers, anchors, suggestions;
- :mod:`.writing`: open, change, threads, comments, verdicts, suggestions applied;
- :mod:`.guardrails`: what refuses an approval, and each graph's settings of it;
- :mod:`.mail`: who hears of mentions and verdicts;
- :mod:`.notifications`: the inbox, live delivery to the person's websockets, mail, mute;
- :mod:`.stale`: approvals going stale, told at once (notification and live state).
"""

"""REST endpoints for runs and renders under ``/api/v1/`` (mounted by :mod:`geon.api`)."""

from __future__ import annotations

from ninja import Router

router = Router(tags=["runs"])

"""geon.teaching (being built this session)."""

"""geon.interop (being built this session)."""

"""Example documents and the named-axes gallery (:mod:`geon.examples.gallery`).

``loom_sharded_add.json`` is loom's own example, kept byte for byte; the gallery builds its graphs
with the authoring API each time it is asked.
"""

"""geon: an editor, checker and executor for tensor graphs with named axes and sharding plans."""

__version__ = "0.1.0"

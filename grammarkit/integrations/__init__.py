"""Adapters to other ecosystems (each imports its ecosystem lazily, behind an extra)."""

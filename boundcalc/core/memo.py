"""A bounded in-process memo for exact numeric keys (the bytes of the arguments).

The special functions keep their last results this way: a grid search asks the same arguments at several
levels, and the bounds of one entry ask each other's. A value is kept under the exact bits of what it was
computed from, so a kept value is the value a new computation gives; the memo only bounds the memory.
"""
from __future__ import annotations


class BoundedMemo(dict):
    """A dict of at most ``size`` entries. :meth:`keep` stores a value and drops the oldest entries beyond
    ``size``; :meth:`recall` returns a value (or None) and marks it the most recently used, so that entries read
    with it are dropped least recently used first (``get`` leaves the order alone: oldest stored first)."""

    def __init__(self, size: int):
        super().__init__()
        self.size = int(size)

    def keep(self, key, value):
        self[key] = value
        while len(self) > self.size:
            del self[next(iter(self))]
        return value

    def recall(self, key):
        hit = self.pop(key, None)
        if hit is not None:
            self[key] = hit
        return hit

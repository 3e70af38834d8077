"""Uplinks waiting for the LTE link."""

from collections import deque

# Readings kept while FlowLog cannot be reached; the oldest are dropped when it is full.
MAX_QUEUED = 1000


class UplinkQueue:
    def __init__(self, maxlen=MAX_QUEUED):
        self._items = deque(maxlen=maxlen)

    def put(self, uplink):
        self._items.append(uplink)

    def pop(self):
        return self._items.popleft()

    def drain_batch(self, size=200):
        """Up to `size` uplinks, oldest first, for one LTE session (2.5)."""
        batch = []
        while self._items and len(batch) < size:
            batch.append(self._items.popleft())
        return batch

    def __len__(self):
        return len(self._items)

"""Uplinks waiting for the LTE link."""

from collections import deque

# Readings kept while FlowLog cannot be reached; the oldest are dropped when it is full.
# A Hub serves up to 32 sensors at one reading per 15 minutes: 32 x 96 x 7 = 21,504 readings a
# week. Keep a full week so an LTE outage over a weekend loses nothing (FLOW-27).
MAX_QUEUED = 24000


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

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from hub_agent.queue import UplinkQueue  # noqa: E402


class QueueTest(unittest.TestCase):
    def test_fifo(self):
        q = UplinkQueue()
        q.put("a")
        q.put("b")
        self.assertEqual(q.pop(), "a")
        self.assertEqual(len(q), 1)

    def test_holds_a_week_for_32_sensors(self):
        q = UplinkQueue()
        for i in range(32 * 96 * 7):
            q.put(i)
        self.assertEqual(len(q), 32 * 96 * 7)
        self.assertEqual(q.pop(), 0)

    def test_drain_batch(self):
        q = UplinkQueue()
        for i in range(5):
            q.put(i)
        self.assertEqual(q.drain_batch(3), [0, 1, 2])


if __name__ == "__main__":
    unittest.main()

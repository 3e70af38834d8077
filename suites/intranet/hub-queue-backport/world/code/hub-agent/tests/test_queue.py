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


if __name__ == "__main__":
    unittest.main()

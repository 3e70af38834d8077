"""What the scripted OpenAI-style model servers (chat.py, responses.py) share: the script's
state, taken one step per model request, and the request log."""

import json
import threading

SEPARATORS = ("__", "_", ".", "-", "/", ":")


class State:
    """The script's steps, taken in order, and the request log (JSON lines, numbered)."""

    def __init__(self, steps, log_path, model, pricing=None):
        self.pricing = pricing
        self.steps = steps
        self.next = 0
        self.n = 0
        self.lock = threading.Lock()
        self.log_path = log_path
        self.model = model

    def take(self):
        with self.lock:
            if self.next < len(self.steps):
                step = self.steps[self.next]
                self.next += 1
                return step, self.next
            return None, self.next

    def log(self, record):
        with self.lock:
            self.n += 1
            record = {"n": self.n, **record}
            if self.log_path:
                with open(self.log_path, "a", encoding="utf-8") as f:
                    f.write(json.dumps(record) + "\n")
                    f.flush()
            return record["n"]

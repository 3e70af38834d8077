import os
import re
import unittest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MIGRATIONS = os.path.join(HERE, "migrations")


def migration_files():
    return sorted(f for f in os.listdir(MIGRATIONS) if f.endswith(".sql"))


class MigrationsTest(unittest.TestCase):
    def test_names_are_numbered(self):
        for f in migration_files():
            self.assertRegex(f, r"^\d{4}_[a-z0-9_]+\.sql$")

    def test_numbers_have_no_gaps(self):
        numbers = [int(f[:4]) for f in migration_files()]
        self.assertEqual(numbers, list(range(1, len(numbers) + 1)))

    def test_up_and_down_sections(self):
        for f in migration_files():
            with open(os.path.join(MIGRATIONS, f), encoding="utf-8") as fh:
                text = fh.read()
            self.assertIn("-- migrate:up", text, f)
            self.assertIn("-- migrate:down", text, f)
            self.assertLess(text.index("-- migrate:up"), text.index("-- migrate:down"), f)


if __name__ == "__main__":
    unittest.main()

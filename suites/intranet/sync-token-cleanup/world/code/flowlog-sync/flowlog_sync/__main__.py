"""Entry point: python3 -m flowlog_sync"""

from .sync import run

if __name__ == "__main__":
    run()

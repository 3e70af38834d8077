"""Alarm rules (docs/alarms.md). Limits come from config/thresholds.json."""

import json
import os

CONFIG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "config", "thresholds.json")


def load_limits(site, path=CONFIG):
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)[site]


def conductivity_alarm(us_cm, limits):
    return us_cm >= limits["conductivity_max_us_cm"]


def level_alarm(cm, limits):
    return cm >= limits["level_max_cm"]

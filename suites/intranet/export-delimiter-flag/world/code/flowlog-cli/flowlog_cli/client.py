"""Minimal FlowLog API client."""

import json
import os
import urllib.parse
import urllib.request

API = os.environ.get("FLOWLOG_API", "https://api.flowlog.brightwater.test/v1")


def fetch_readings(site, start, end):
    """Readings of `site` from `start` to `end` (inclusive days) as a list of dicts."""
    query = urllib.parse.urlencode({"site": site, "from": start, "to": end})
    with urllib.request.urlopen(API + "/readings?" + query, timeout=60) as resp:
        return json.load(resp)["readings"]

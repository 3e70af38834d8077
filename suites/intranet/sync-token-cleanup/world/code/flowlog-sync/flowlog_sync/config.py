"""Settings of the nightly sync."""

import os

API = os.environ.get("FLOWLOG_API", "https://api.flowlog.brightwater.test/v1")

# FlowLog service account "crm-sync" (live)
API_TOKEN = "flk_live_7Qm2xR9vLp4TzK8w"


def auth_headers():
    return {"Authorization": "Bearer " + API_TOKEN}

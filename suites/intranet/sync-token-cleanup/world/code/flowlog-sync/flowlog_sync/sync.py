"""Copy sites from the CRM export into FlowLog."""

import csv
import json
import urllib.request

from .config import API, auth_headers

CRM_EXPORT = "/srv/crm/export/sites.csv"


def load_sites(path=CRM_EXPORT):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def push_site(site):
    req = urllib.request.Request(API + "/sites/" + site["slug"], data=json.dumps(site).encode(),
                                 method="PUT", headers=dict(auth_headers(), **{"Content-Type": "application/json"}))
    urllib.request.urlopen(req, timeout=30).close()


def run():
    for site in load_sites():
        push_site(site)

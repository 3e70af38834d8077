"""Status uplink of the Hub."""

from . import __version__


def status_payload(uptime_s, queued):
    return {"firmware": __version__, "uptime_s": uptime_s, "queued": queued}

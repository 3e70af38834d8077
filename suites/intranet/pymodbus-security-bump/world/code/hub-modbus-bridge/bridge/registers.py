"""Register maps of the supported flow meters (no pymodbus import: pure data)."""

FLOW_METERS = {
    "krohne-optiflux": {"flow_m3h": (3002, "float32"), "total_m3": (3016, "float64")},
    "siemens-mag5000": {"flow_m3h": (1000, "float32"), "total_m3": (1010, "float32")},
}


def register_of(model, quantity):
    return FLOW_METERS[model][quantity][0]

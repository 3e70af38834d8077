from .frames import decode_frame  # noqa: F401

__version__ = "2.5.0.dev0"

__version__ = "2.4.3"

"""Errors that tell the user what is wrong and how to fix it."""


class SentembError(Exception):
    """Base class: every message says what went wrong and what to do about it."""


class DataError(SentembError):
    """A data file is missing, corrupt or malformed."""


class ConfigError(SentembError):
    """A spec, profile or command-line option is invalid."""

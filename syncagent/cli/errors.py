"""The one exception type the CLI turns into a one-line message and exit code 1."""


class UserError(Exception):
    """A problem the user can fix; the message starts with the object it is about."""

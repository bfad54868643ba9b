"""Errors raised for bad user input (exit code 2 at the command line)."""


class InputError(ValueError):
    """A user-supplied value is not allowed. The message names the parameter and what is allowed."""

    def __init__(self, parameter: str, allowed: str, got=None):
        self.parameter = parameter
        self.allowed = allowed
        self.got = got
        shown = "" if got is None else f" (got {shorten(got)})"
        super().__init__(f"--{parameter}: {allowed}{shown}")


def shorten(value, limit: int = 40) -> str:
    """``repr`` of a user value, cut to ``limit`` characters (a 100 kB value is not echoed back)."""
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(str(value))} characters)"

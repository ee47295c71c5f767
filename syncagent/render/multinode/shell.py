"""Command-line facts and quoting shared by the backends' launch rewrites.

Everything here reproduces how upstream's operator reads and rewrites a container command
line (ai-dynamo/dynamo ``deploy/operator/internal/dynamo/utils.go``), character for character,
because the result ends up in pod templates that must equal upstream's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# Go's strings.Fields splits on Unicode white space; str.split() would also split on \x1c-\x1f.
_GO_SPACE = re.compile(r"[\t\n\v\f\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+")
_PYTHON = re.compile(r"(.*/)?(python\d*(\.\d+)*)", re.ASCII)
_SHELL_SAFE = re.compile(r"[A-Za-z0-9_@%+=:,./-]+")
_BASH_C_SPECIAL = frozenset(" \t\n'\"\\{}[]$`!")


def fields(text: str) -> list[str]:
    """``text`` split on white space, as Go's ``strings.Fields``."""
    return [part for part in _GO_SPACE.split(text) if part]


def expanded(tokens: Sequence[str]) -> list[str]:
    """Every token split on white space (``"python3 -m x"`` counts as three tokens)."""
    return [part for token in tokens for part in fields(token)]


def is_python_command(command: str) -> bool:
    """``python``, ``python3``, ``python3.11``, ``/usr/bin/python3.8``... but not ``python-config``."""
    return _PYTHON.fullmatch(command) is not None


def quote_for_bash_c(token: str) -> str:
    """A token as upstream writes it inside ``sh -c``: double-quoted when it has shell syntax."""
    if not any(ch in _BASH_C_SPECIAL for ch in token):
        return token
    escaped = token.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")
    escaped = escaped.replace("`", "\\`").replace("'", "'\"'\"'")
    return f'"{escaped}"'


def quote_posix(token: str) -> str:
    """A token that survives ``sh -c`` as exactly one argument (single quotes when needed)."""
    if _SHELL_SAFE.fullmatch(token):
        return token
    return "'" + token.replace("'", "'\\''") + "'"


def has_flag(tokens: Sequence[str], flag: str) -> bool:
    return flag in tokens


def has_arg(tokens: Sequence[str], flag: str, value: str) -> bool:
    """``flag value`` as adjacent tokens, or ``flag value`` / ``flag=value`` inside one token."""
    joined, equals = f"{flag} {value}", f"{flag}={value}"
    for i, token in enumerate(tokens):
        if joined in token or equals in token:
            return True
        if token == flag and i + 1 < len(tokens) and tokens[i + 1] == value:
            return True
    return False


def command_line_has_arg(
    command: Sequence[str], args: Sequence[str], flag: str, value: str
) -> bool:
    """:func:`has_arg` over command + args, as written and split on white space."""
    line = [*command, *args]
    return has_arg(line, flag, value) or has_arg(expanded(line), flag, value)


def flag_value(tokens: Sequence[str], flag: str) -> int:
    """The integer after the first ``flag`` that has one (1 when none does)."""
    for i, token in enumerate(tokens):
        if token == flag and i + 1 < len(tokens):
            value = _go_int(tokens[i + 1])
            if value is not None:
                return value
    return 1


def _go_int(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``: an optional sign and ASCII digits, within int64."""
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None

"""JSON logs: one orjson object per line with ``ts``, ``level``, ``msg`` and structured fields.

Modules log through the standard library (``logging.getLogger(__name__)``) and pass fields as
``extra``: ``log.info("applied", extra={"object": "Deployment/ns/x", "action": "created"})``.
Every ``extra`` key becomes a top-level field of the line.
"""

from __future__ import annotations

import logging
import sys
from datetime import UTC, datetime
from typing import IO, Any

import orjson

# Attributes every LogRecord has; anything else on a record came from ``extra``.
_RESERVED = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "taskName",
}
_CORE = ("ts", "level", "msg", "logger")


def _default(value: Any) -> Any:
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    if isinstance(value, BaseException):
        return repr(value)
    return str(value)


def log_fields(record: logging.LogRecord) -> dict[str, Any]:
    """The structured fields a record carries (its ``extra`` keys)."""
    return {k: v for k, v in vars(record).items() if k not in _RESERVED}


def format_line(record: logging.LogRecord) -> bytes:
    """The JSON line for ``record``, without the trailing newline."""
    ts = datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")
    line: dict[str, Any] = {
        "ts": ts.replace("+00:00", "Z"),
        "level": record.levelname.lower(),
        "msg": record.getMessage(),
        "logger": record.name,
    }
    for key, value in log_fields(record).items():
        # A field never overwrites ts/level/msg/logger: keep both, the field prefixed.
        line[f"field.{key}" if key in _CORE else key] = value
    if record.exc_info and record.exc_info[1] is not None:
        line["error"] = str(record.exc_info[1]) or type(record.exc_info[1]).__name__
        line["traceback"] = logging.Formatter().formatException(record.exc_info)
    return orjson.dumps(line, default=_default, option=orjson.OPT_NON_STR_KEYS)


class JSONFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return format_line(record).decode()


def configure_logging(*, level: str | int = "info", stream: IO[str] | None = None) -> None:
    """Send every log record to ``stream`` (stderr by default) as one JSON object per line."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JSONFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper() if isinstance(level, str) else level)
    # httpx2 logs every request at INFO; our request metrics already count them.
    logging.getLogger("httpx2").setLevel(logging.WARNING)
    logging.getLogger("httpcore").setLevel(logging.WARNING)

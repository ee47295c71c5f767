"""The failures of Go's ``url.Parse`` that a configured URL can hit (upstream validates
``infrastructure.modelExpressURL`` with it)."""

from __future__ import annotations

import re

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def url_problem(raw: str) -> str | None:
    """Why Go's ``url.Parse`` refuses ``raw``, or ``None`` when it accepts it."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in raw):
        return "it contains a control character"
    if raw.startswith(":"):
        return "missing protocol scheme"
    scheme = _SCHEME.match(raw)
    rest = raw[scheme.end() :] if scheme else raw
    rest = rest.split("#", 1)[0].split("?", 1)[0]
    if not scheme and not rest.startswith("/") and ":" in rest.split("/", 1)[0]:
        return "first path segment in URL cannot contain colon (add a scheme, e.g. http://)"
    if _BAD_ESCAPE.search(rest):
        return "invalid percent escape"
    if rest.startswith("//"):
        return _authority_problem(rest[2:].split("/", 1)[0])
    return None


def _authority_problem(authority: str) -> str | None:
    host = authority.rsplit("@", 1)[-1]
    if host.startswith("["):
        end = host.find("]")
        if end < 0:
            return "missing ']' in host"
        port = host[end + 1 :]
        if port and not re.fullmatch(r":\d*", port):
            return f"invalid port {port!r} after host"
        return None
    if ":" in host:
        port = host[host.rindex(":") :]
        if not re.fullmatch(r":\d*", port):
            return f"invalid port {port!r} after host"
    return None

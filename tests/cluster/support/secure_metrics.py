"""The agent's secure metrics endpoint as a scraper reaches it (no tests here)."""

from __future__ import annotations

import ssl
import urllib.error
import urllib.request


def scrape(url: str, token: str | None = None) -> tuple[int, str]:
    """GET ``url`` over TLS (the agent's certificate is self-signed), as ``token``'s bearer."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # self-signed: the token is what authenticates
    request = urllib.request.Request(url)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()

"""Which ServiceAccount the agent runs as (``--service-account``, else its in-cluster token):
no pod it renders may run as it (docs/security.md §2)."""

from __future__ import annotations

import base64
import binascii
from pathlib import Path

import orjson

from syncagent.cli.errors import UserError
from syncagent.render import AgentAccount

TOKEN_FILE = Path("/var/run/secrets/kubernetes.io/serviceaccount/token")
_SUBJECT_PREFIX = "system:serviceaccount:"


def own_account(flag: str, *, token: Path = TOKEN_FILE) -> AgentAccount | None:
    """The flag's ``NAMESPACE/NAME``, else the token's subject; None outside a cluster."""
    if flag:
        namespace, _, name = flag.partition("/")
        if not namespace or not name or "/" in name:
            raise UserError(
                f"--service-account {flag!r}: expected NAMESPACE/NAME, for example "
                "syncagent/syncagent"
            )
        return AgentAccount(namespace, name)
    return token_account(token.read_text()) if token.is_file() else None


def token_account(jwt: str) -> AgentAccount | None:
    """The ServiceAccount a Kubernetes token was issued to (its ``sub`` claim), if it says."""
    parts = jwt.strip().split(".")
    if len(parts) != 3:
        return None
    payload = parts[1] + "=" * (-len(parts[1]) % 4)
    try:
        subject = orjson.loads(base64.urlsafe_b64decode(payload)).get("sub")
    except (binascii.Error, orjson.JSONDecodeError, AttributeError, ValueError):
        return None
    if not isinstance(subject, str) or not subject.startswith(_SUBJECT_PREFIX):
        return None
    namespace, _, name = subject.removeprefix(_SUBJECT_PREFIX).partition(":")
    return AgentAccount(namespace, name) if namespace and name else None

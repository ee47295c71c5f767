"""Who asks, on an endpoint the API server's aggregator proxies to (an aggregated API).

The API server authenticates the caller, then forwards the request over TLS with its front-proxy
client certificate and the caller in headers (``X-Remote-User``, ``X-Remote-Uid``,
``X-Remote-Group``, ``X-Remote-Extra-<key>``; the names are configurable). Those headers mean
something only on a connection whose client certificate chains to the front proxy's CA and whose
common name is one of the allowed names; the API server publishes all of it in ConfigMap
``kube-system/extension-apiserver-authentication`` (:func:`parse_trust`).

The check is made in the TLS handshake (:class:`FrontProxyContext`): the context requires a
client certificate signed by the front proxy's CA, and a certificate with any other common name
fails the handshake. hypercorn does not put the peer certificate into the ASGI scope, so a check
made later could not see it; made in the handshake, every request that reaches the app came
through the front proxy, and the app may read the headers (:func:`caller`). A direct connection
without that certificate gets no HTTP answer at all.

The ConfigMap is read again every ``CHECK_EVERY`` seconds (:func:`follow`): the allowed names and
header names follow it at once; a new CA is added to the ones trusted (OpenSSL cannot remove one
from a context: a CA taken out stays trusted until the agent restarts).
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

import anyio
import orjson

log = logging.getLogger(__name__)

NAMESPACE = "kube-system"
CONFIGMAP = "extension-apiserver-authentication"
CHECK_EVERY = 30.0


@dataclass(frozen=True)
class Trust:
    """What makes a forwarded request trustworthy, and where its caller is."""

    ca_pem: str = ""
    allowed_names: frozenset[str] = frozenset()  # empty: any certificate the CA signed
    user_headers: tuple[str, ...] = ("x-remote-user",)
    uid_headers: tuple[str, ...] = ("x-remote-uid",)
    group_headers: tuple[str, ...] = ("x-remote-group",)
    extra_prefixes: tuple[str, ...] = ("x-remote-extra-",)


@dataclass(frozen=True)
class Caller:
    user: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: dict[str, list[str]] = field(default_factory=dict)


def _names(data: dict[str, str], key: str) -> tuple[str, ...]:
    """The header names under ``key``; none when the API server names none (a header it does
    not set is one a caller could have sent)."""
    return tuple(str(v).lower() for v in orjson.loads(data.get(key) or "[]"))


def parse_trust(data: dict[str, str]) -> Trust:
    """The front proxy's trust from the ConfigMap's data (ValueError when it names none)."""
    ca = data.get("requestheader-client-ca-file", "")
    if "BEGIN CERTIFICATE" not in ca:
        raise ValueError(
            f"ConfigMap/{NAMESPACE}/{CONFIGMAP}: no requestheader-client-ca-file; start the API "
            "server with --requestheader-client-ca-file (the aggregation layer)"
        )
    allowed = frozenset(
        str(n) for n in orjson.loads(data.get("requestheader-allowed-names") or "[]")
    )
    return Trust(
        ca_pem=ca,
        allowed_names=allowed,
        user_headers=_names(data, "requestheader-username-headers"),
        uid_headers=_names(data, "requestheader-uid-headers"),
        group_headers=_names(data, "requestheader-group-headers"),
        extra_prefixes=_names(data, "requestheader-extra-headers-prefix"),
    )


def common_name(peer: dict[str, Any] | None) -> str:
    """The subject CN of ``ssl.getpeercert()``'s answer ("" when none)."""
    for rdn in (peer or {}).get("subject", ()):
        for key, value in rdn:
            if key == "commonName":
                return str(value)
    return ""


class _FrontProxyObject(ssl.SSLObject):
    """A server-side TLS connection that completes its handshake only for an allowed name."""

    def do_handshake(self) -> None:
        super().do_handshake()
        context = self.context
        if isinstance(context, FrontProxyContext):
            context.admit(self.getpeercert())


class FrontProxyContext(ssl.SSLContext):
    """A TLS server context that takes only the front proxy's client certificate."""

    sslobject_class = _FrontProxyObject
    trust: Trust

    def __new__(cls) -> FrontProxyContext:
        context = super().__new__(cls, ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.verify_mode = ssl.CERT_REQUIRED
        context.trust = Trust()
        return context

    def follow_trust(self, trust: Trust) -> bool:
        """Serve with ``trust`` from now on; True when it changed."""
        if trust == self.trust:
            return False
        if trust.ca_pem != self.trust.ca_pem:
            self.load_verify_locations(cadata=trust.ca_pem)
        self.trust = trust
        return True

    def admit(self, peer: dict[str, Any] | None) -> None:
        name = common_name(peer)
        allowed = self.trust.allowed_names
        if not name or (allowed and name not in allowed):
            log.warning(
                "history: refused a client certificate that is not the front proxy's",
                extra={"commonName": name, "allowed": sorted(allowed)},
            )
            raise ssl.SSLError(f"client certificate CN {name!r} is not an allowed front proxy")


def caller(headers: Iterable[tuple[bytes, bytes]], trust: Trust) -> Caller | None:
    """The caller the front proxy forwarded (None when it named no user)."""
    user = uid = ""
    groups: list[str] = []
    extra: dict[str, list[str]] = {}
    for raw_name, raw_value in headers:
        name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
        if name in trust.user_headers and not user:
            user = value
        elif name in trust.uid_headers and not uid:
            uid = value
        elif name in trust.group_headers:
            groups.append(value)
        else:
            prefix = next((p for p in trust.extra_prefixes if name.startswith(p)), None)
            if prefix is not None:
                extra.setdefault(unquote(name[len(prefix) :]), []).append(value)
    if not user:
        return None
    return Caller(user, uid, tuple(groups), extra)


Read = Callable[[], Awaitable[dict[str, str]]]


async def refresh(context: FrontProxyContext, read: Read) -> None:
    """Load the ConfigMap's trust into ``context`` (errors logged; the last trust stays)."""
    try:
        changed = context.follow_trust(parse_trust(await read()))
    except Exception as err:
        log.warning(
            f"history: ConfigMap/{NAMESPACE}/{CONFIGMAP} could not be read as the front proxy's "
            "trust; keeping the last one; check that the agent may get it (Role "
            "extension-apiserver-authentication-reader)",
            extra={"error": str(err)},
        )
        return
    if changed:
        log.info(
            "history: front-proxy trust loaded",
            extra={"allowed": sorted(context.trust.allowed_names)},
        )


async def follow(context: FrontProxyContext, read: Read, *, every: float = CHECK_EVERY) -> None:
    """Re-read the trust every ``every`` seconds, until cancelled."""
    while True:
        await anyio.sleep(every)
        await refresh(context, read)

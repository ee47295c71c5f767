"""The front proxy's trust (runtime/frontproxy.py): the ConfigMap read, the caller taken from
the headers, and the TLS handshake that completes only for the front proxy's certificate (a real
hypercorn endpoint on localhost, a real TLS client)."""

from __future__ import annotations

import ssl
from pathlib import Path

import anyio
import httpx2
import orjson
import pytest

from syncagent.devcluster import pki
from syncagent.runtime import frontproxy, http, selfsigned
from syncagent.runtime.frontproxy import Caller, FrontProxyContext, Trust, caller, parse_trust

pytestmark = pytest.mark.anyio


def configmap_data(ca: str, *, allowed: list[str]) -> dict[str, str]:
    """What kube-apiserver publishes in kube-system/extension-apiserver-authentication."""
    return {
        "requestheader-client-ca-file": ca,
        "requestheader-allowed-names": orjson.dumps(allowed).decode(),
        "requestheader-username-headers": '["X-Who"]',
        "requestheader-group-headers": '["X-Teams"]',
        "requestheader-extra-headers-prefix": '["X-Also-"]',
        "requestheader-uid-headers": '["X-Id"]',
    }


def test_the_trust_comes_from_the_configmap_with_its_header_names() -> None:
    trust = parse_trust(configmap_data("-----BEGIN CERTIFICATE-----\n", allowed=["fp"]))
    assert trust.allowed_names == frozenset({"fp"})
    assert (trust.user_headers, trust.group_headers) == (("x-who",), ("x-teams",))
    assert (trust.uid_headers, trust.extra_prefixes) == (("x-id",), ("x-also-",))


def test_no_front_proxy_ca_is_an_error_naming_the_configmap_and_the_flag() -> None:
    with pytest.raises(ValueError, match=r"^ConfigMap/kube-system/extension-apiserver-auth"):
        parse_trust({"client-ca-file": "x"})
    with pytest.raises(ValueError, match="--requestheader-client-ca-file"):
        parse_trust({})


def test_the_caller_is_the_user_groups_uid_and_extra_the_headers_name() -> None:
    trust = parse_trust(configmap_data("-----BEGIN CERTIFICATE-----\n", allowed=[]))
    headers = [
        (b"X-Who", b"alice"),
        (b"X-Who", b"mallory"),  # the first wins, as the API server's own reader takes it
        (b"X-Teams", b"dev"),
        (b"x-teams", b"system:authenticated"),
        (b"X-Id", b"u-1"),
        (b"X-Also-Scopes", b"a"),
        (b"X-Also-Scopes", b"b"),
        (b"X-Also-Cloud%2Fzone", b"eu"),
        (b"X-Remote-User", b"root"),  # not a header this API server names
    ]
    assert caller(headers, trust) == Caller(
        "alice",
        "u-1",
        ("dev", "system:authenticated"),
        {"scopes": ["a", "b"], "cloud/zone": ["eu"]},
    )
    assert caller([(b"X-Teams", b"dev")], trust) is None


# -- the handshake ---------------------------------------------------------------------------


def _leaf(folder: Path, name: str, *, ca_cert: Path, ca_key: Path) -> tuple[str, str]:
    cert, key = pki.issue_client(ca_cert, ca_key, folder, common_name=name)
    return str(cert), str(key)


async def _who(scope: http.Scope, receive: http.Receive, send: http.Send) -> None:
    found = caller(scope["headers"], Trust())
    await http.send_response(send, http.Response(200, found.user if found else "nobody"))


def _serving_context(tmp_path: Path, keys: pki.Pki) -> FrontProxyContext:
    context = FrontProxyContext()
    cert, key = selfsigned.self_signed("localhost")
    (tmp_path / "tls.crt").write_bytes(cert)
    (tmp_path / "tls.key").write_bytes(key)
    context.load_cert_chain(str(tmp_path / "tls.crt"), str(tmp_path / "tls.key"))
    ca = keys.front_proxy_ca_cert.read_text()
    context.follow_trust(parse_trust(configmap_data(ca, allowed=[pki.FRONT_PROXY_CLIENT])))
    return context


async def _get(port: int, cert: tuple[str, str] | None) -> str:
    client_tls = ssl.create_default_context()
    client_tls.check_hostname = False
    client_tls.verify_mode = ssl.CERT_NONE
    if cert is not None:
        client_tls.load_cert_chain(*cert)
    async with httpx2.AsyncClient(verify=client_tls, timeout=5) as client:
        response = await client.get(
            f"https://127.0.0.1:{port}/x", headers={"X-Remote-User": "system:admin"}
        )
        return response.text


async def test_only_the_front_proxys_certificate_gets_an_answer(tmp_path: Path) -> None:
    keys = pki.generate(tmp_path / "pki")
    context = _serving_context(tmp_path, keys)
    front = (str(keys.proxy_client_cert), str(keys.proxy_client_key))
    fp_ca = {"ca_cert": keys.front_proxy_ca_cert, "ca_key": keys.front_proxy_ca_key}
    wrong_name = _leaf(tmp_path, "someone-else", **fp_ca)
    cluster_ca = {"ca_cert": keys.ca_cert, "ca_key": keys.ca_key}
    other_ca = _leaf(tmp_path, pki.FRONT_PROXY_CLIENT + "-x", **cluster_ca)
    server = http.Server("127.0.0.1:0", {}, what="test", tls=context, app=_who)
    async with anyio.create_task_group() as tg:
        port = await tg.start(http.serve_endpoint, server)
        assert await _get(port, front) == "system:admin"
        for refused in (None, wrong_name, other_ca, (str(keys.admin_cert), str(keys.admin_key))):
            with pytest.raises(httpx2.TransportError):
                await _get(port, refused)
        # The allowed names follow the ConfigMap: the same certificate, no longer allowed.
        ca = keys.front_proxy_ca_cert.read_text()
        assert context.follow_trust(parse_trust(configmap_data(ca, allowed=["another"])))
        with pytest.raises(httpx2.TransportError):
            await _get(port, front)
        tg.cancel_scope.cancel()


async def test_a_configmap_that_does_not_read_keeps_the_last_trust(caplog) -> None:
    context = FrontProxyContext()

    async def broken() -> dict[str, str]:
        raise OSError("connection refused")

    before = context.trust
    await frontproxy.refresh(context, broken)
    assert context.trust is before
    assert "extension-apiserver-authentication-reader" in caplog.text


def test_a_header_the_api_server_does_not_name_is_not_trusted() -> None:
    data = configmap_data("-----BEGIN CERTIFICATE-----\n", allowed=[])
    del data["requestheader-uid-headers"]  # kube-apiserver before 1.32, or not configured
    trust = parse_trust(data)
    assert trust.uid_headers == ()
    assert caller([(b"X-Who", b"alice"), (b"X-Remote-Uid", b"forged")], trust) == Caller("alice")

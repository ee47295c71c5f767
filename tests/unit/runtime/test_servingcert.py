"""The secure metrics endpoint serves a Secret-mounted pair, follows it as it changes, and is
self-signed while the folder has none (a real TLS server, handshakes from a thread)."""

import logging
import ssl

import anyio
import pytest
from cryptography import x509

from syncagent.runtime import http, selfsigned, servingcert
from tests.support.polling import eventually_async

pytestmark = pytest.mark.anyio


def write_pair(folder, host: str) -> None:
    cert, key = selfsigned.self_signed(host)
    folder.mkdir(exist_ok=True)
    # As the kubelet updates a mounted Secret: new files swapped in, not rewritten in place.
    for name, data in (("tls.crt", cert), ("tls.key", key)):
        (folder / f".{name}.new").write_bytes(data)
        (folder / f".{name}.new").replace(folder / name)


async def served_name(port: int) -> str:
    pem = await anyio.to_thread.run_sync(ssl.get_server_certificate, ("127.0.0.1", port))
    cert = x509.load_pem_x509_certificate(pem.encode())
    return cert.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)[0].value


async def test_a_mounted_pair_is_served_followed_and_self_signed_meanwhile(tmp_path, caplog):
    folder = tmp_path / "tls"
    cert = servingcert.ServingCert(str(folder))  # nothing mounted yet
    server = http.Server("127.0.0.1:0", {}, what="metrics", tls=cert.context)
    async with anyio.create_task_group() as tg:
        port = await tg.start(http.serve_endpoint, server)
        first = await served_name(port)
        assert first not in ("issued-1", "issued-2")  # self-signed for this host

        write_pair(folder, "issued-1")
        assert cert.reload()
        assert await served_name(port) == "issued-1"
        assert not cert.reload()  # unchanged: nothing loaded

        write_pair(folder, "issued-2")
        assert cert.reload()
        assert await served_name(port) == "issued-2"

        (folder / "tls.key").write_text("not a key")
        with caplog.at_level(logging.WARNING):
            assert not cert.reload()
        assert "do not load as a certificate" in caplog.text
        assert str(folder / "tls.crt") in caplog.text
        assert await served_name(port) == "issued-2"  # the last good one stays
        tg.cancel_scope.cancel()


async def test_follow_loads_a_renewed_pair_by_itself(tmp_path):
    folder = tmp_path / "tls"
    write_pair(folder, "issued-1")
    cert = servingcert.ServingCert(str(folder))
    server = http.Server("127.0.0.1:0", {}, what="metrics", tls=cert.context)
    async with anyio.create_task_group() as tg:
        port = await tg.start(http.serve_endpoint, server)
        tg.start_soon(lambda: cert.follow(every=0.05))
        assert await served_name(port) == "issued-1"
        write_pair(folder, "issued-2")

        async def renewed() -> bool:
            return await served_name(port) == "issued-2"

        await eventually_async(renewed, deadline=10, what="the renewed pair to be served")
        tg.cancel_scope.cancel()

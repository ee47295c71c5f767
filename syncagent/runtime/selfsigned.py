"""The TLS identity of the secure metrics endpoint: the certificate and key in a folder
(``tls.crt``, ``tls.key``, as a Secret mounts them), or else a self-signed one made at start,
as controller-runtime does when it has no certificate folder (Prometheus then scrapes with
``insecure_skip_verify`` or pins nothing; the token is what authenticates)."""

from __future__ import annotations

import datetime
import ipaddress
import socket
import ssl
import tempfile
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def server_context(cert_dir: str | None) -> ssl.SSLContext:
    """A TLS server context from ``cert_dir`` when given, else from a fresh self-signed pair."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if cert_dir:
        folder = Path(cert_dir)
        context.load_cert_chain(str(folder / "tls.crt"), str(folder / "tls.key"))
        return context
    cert, key = self_signed(socket.gethostname())
    with tempfile.TemporaryDirectory(prefix="syncagent-tls-") as tmp:
        # ssl loads a chain only from files; they live as long as this call.
        (Path(tmp) / "tls.crt").write_bytes(cert)
        (Path(tmp) / "tls.key").write_bytes(key)
        context.load_cert_chain(str(Path(tmp) / "tls.crt"), str(Path(tmp) / "tls.key"))
    return context


def self_signed(host: str, *, days: int = 365) -> tuple[bytes, bytes]:
    """A PEM certificate for ``host``, localhost and 127.0.0.1, and its PEM key."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    now = datetime.datetime.now(datetime.UTC)
    names: list[x509.GeneralName] = [
        x509.DNSName(host),
        x509.DNSName("localhost"),
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
    ]
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_pem

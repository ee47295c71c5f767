"""Certificates and keys for the test control plane: a CA, serving certs, clients, SA keys.

One CA signs everything: the API server's serving cert, the webhook server's serving cert (the
API server trusts it through the webhook configurations' ``caBundle``), the client certs of the
admin, the controller manager and the scheduler (their user names are the ones the API server's
bootstrap RBAC grants), and, through the controller manager's cluster signer, any CSR.

A second CA, the front proxy's, signs only the client certificate the API server presents when it
proxies a request to an aggregated API (``--proxy-client-cert-file``): an aggregated server
trusts the ``X-Remote-User`` headers only from that CA's certificate with the allowed name
(:data:`FRONT_PROXY_CLIENT`), so no ordinary client certificate can pass as the front proxy.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

_VALIDITY = dt.timedelta(days=365)
FRONT_PROXY_CLIENT = "front-proxy-client"


@dataclass(frozen=True, slots=True)
class Pki:
    """Paths of every file the control plane and its clients need."""

    ca_cert: Path
    ca_key: Path
    serving_cert: Path
    serving_key: Path
    admin_cert: Path
    admin_key: Path
    controller_manager_cert: Path
    controller_manager_key: Path
    scheduler_cert: Path
    scheduler_key: Path
    webhook_dir: Path  # tls.crt + tls.key, the names controller-runtime's webhook server reads
    sa_key: Path
    sa_pub: Path
    front_proxy_ca_cert: Path
    front_proxy_ca_key: Path
    proxy_client_cert: Path
    proxy_client_key: Path


def generate(folder: Path) -> Pki:
    folder.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _ca_cert(ca_key)
    sa_key = ec.generate_private_key(ec.SECP256R1())
    pki = Pki(
        ca_cert=folder / "ca.crt",
        ca_key=folder / "ca.key",
        serving_cert=folder / "apiserver.crt",
        serving_key=folder / "apiserver.key",
        admin_cert=folder / "admin.crt",
        admin_key=folder / "admin.key",
        controller_manager_cert=folder / "controller-manager.crt",
        controller_manager_key=folder / "controller-manager.key",
        scheduler_cert=folder / "scheduler.crt",
        scheduler_key=folder / "scheduler.key",
        webhook_dir=folder / "webhook",
        sa_key=folder / "sa.key",
        sa_pub=folder / "sa.pub",
        front_proxy_ca_cert=folder / "front-proxy-ca.crt",
        front_proxy_ca_key=folder / "front-proxy-ca.key",
        proxy_client_cert=folder / "front-proxy-client.crt",
        proxy_client_key=folder / "front-proxy-client.key",
    )
    pki.webhook_dir.mkdir(exist_ok=True)
    _write_cert(pki.ca_cert, ca)
    _write_key(pki.ca_key, ca_key)
    leaves = (
        (pki.serving_cert, pki.serving_key, "kube-apiserver", "", True),
        (pki.webhook_dir / "tls.crt", pki.webhook_dir / "tls.key", "lws-webhook", "", True),
        (pki.admin_cert, pki.admin_key, "syncagent-admin", "system:masters", False),
        (
            pki.controller_manager_cert,
            pki.controller_manager_key,
            "system:kube-controller-manager",
            "",
            False,
        ),
        (pki.scheduler_cert, pki.scheduler_key, "system:kube-scheduler", "", False),
    )
    for cert_path, key_path, common_name, org, server in leaves:
        key, cert = _leaf(ca, ca_key, common_name=common_name, org=org, server=server)
        _write_cert(cert_path, cert)
        _write_key(key_path, key)
    _front_proxy(pki)
    _write_key(pki.sa_key, sa_key)
    pki.sa_pub.write_bytes(
        sa_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return pki


def _front_proxy(pki: Pki) -> None:
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _ca_cert(ca_key, common_name="syncagent-dev-front-proxy-ca")
    _write_cert(pki.front_proxy_ca_cert, ca)
    _write_key(pki.front_proxy_ca_key, ca_key)
    key, cert = _leaf(ca, ca_key, common_name=FRONT_PROXY_CLIENT)
    _write_cert(pki.proxy_client_cert, cert)
    _write_key(pki.proxy_client_key, key)


def issue_client(
    ca_cert: Path, ca_key: Path, folder: Path, *, common_name: str, org: str = ""
) -> tuple[Path, Path]:
    """A client certificate for ``common_name`` (group ``org``) signed by the CA at
    ``ca_cert``/``ca_key``: a user as an identity provider would make one; its paths."""
    ca = x509.load_pem_x509_certificate(ca_cert.read_bytes())
    signer = serialization.load_pem_private_key(ca_key.read_bytes(), None)
    if not isinstance(signer, ec.EllipticCurvePrivateKey):
        raise ValueError(f"{ca_key}: not an EC key")
    key, cert = _leaf(ca, signer, common_name=common_name, org=org)
    paths = (folder / f"{common_name}.crt", folder / f"{common_name}.key")
    _write_cert(paths[0], cert)
    _write_key(paths[1], key)
    return paths


def _name(common_name: str, org: str = "") -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    if org:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, org))
    return x509.Name(attrs)


def _builder(
    subject: x509.Name, issuer: x509.Name, key: ec.EllipticCurvePrivateKey
) -> x509.CertificateBuilder:
    now = dt.datetime.now(dt.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + _VALIDITY)
    )


def _ca_cert(
    key: ec.EllipticCurvePrivateKey, *, common_name: str = "syncagent-dev-cluster-ca"
) -> x509.Certificate:
    name = _name(common_name)
    return (
        _builder(name, name, key)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )


def _leaf(
    ca: x509.Certificate,
    ca_key: ec.EllipticCurvePrivateKey,
    *,
    common_name: str,
    org: str = "",
    server: bool = False,
) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
    builder = _builder(_name(common_name, org), ca.subject, key).add_extension(
        x509.ExtendedKeyUsage([usage]), critical=False
    )
    if server:
        builder = builder.add_extension(
            x509.SubjectAlternativeName(
                [
                    x509.DNSName("localhost"),
                    x509.DNSName("kubernetes.default.svc"),
                    x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                ]
            ),
            critical=False,
        )
    return key, builder.sign(ca_key, hashes.SHA256())


def _write_cert(path: Path, cert: x509.Certificate) -> None:
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    path.chmod(0o600)

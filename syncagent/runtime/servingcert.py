"""The serving certificate of the secure metrics endpoint: ``tls.crt`` and ``tls.key`` in a
folder (as a Secret mounts them, e.g. one cert-manager issues), followed as they change, with a
self-signed pair (``selfsigned.py``) while the folder has none.

One ``ssl.SSLContext`` serves for the whole run; loading a new pair into it changes what every
later handshake presents, so a renewed certificate needs no restart. The folder is checked
every ``CHECK_EVERY`` seconds (the kubelet refreshes a mounted Secret within about a minute);
a pair that does not load is logged, naming the files and what to do, and the one served
stays.
"""

from __future__ import annotations

import logging
import socket
import ssl
import tempfile
from pathlib import Path

import anyio

from syncagent.runtime import selfsigned

log = logging.getLogger(__name__)

CHECK_EVERY = 10.0

Stamp = tuple[int, int, int, int] | None


def _stamp(cert: Path, key: Path) -> Stamp:
    """What changes when either file is replaced (a Secret update swaps a symlink)."""
    try:
        c, k = cert.stat(), key.stat()
    except OSError:
        return None
    return (c.st_ino, c.st_mtime_ns, k.st_ino, k.st_mtime_ns)


def _load_self_signed(context: ssl.SSLContext) -> None:
    cert, key = selfsigned.self_signed(socket.gethostname())
    with tempfile.TemporaryDirectory(prefix="syncagent-tls-") as tmp:
        # ssl loads a chain only from files; they live as long as this call.
        (Path(tmp) / "tls.crt").write_bytes(cert)
        (Path(tmp) / "tls.key").write_bytes(key)
        context.load_cert_chain(str(Path(tmp) / "tls.crt"), str(Path(tmp) / "tls.key"))


class ServingCert:
    """A TLS server context that follows ``cert_dir`` (None: self-signed for the run)."""

    def __init__(
        self,
        cert_dir: str | None,
        *,
        context: ssl.SSLContext | None = None,
        what: str = "metrics",
    ) -> None:
        self._what = what  # which endpoint, in log lines
        self.context = context or ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.context.minimum_version = ssl.TLSVersion.TLSv1_2
        self._dir = Path(cert_dir) if cert_dir else None
        self._served: Stamp = None
        if not self.reload():
            _load_self_signed(self.context)

    def reload(self) -> bool:
        """Load the folder's pair if it changed since the last load; True when loaded."""
        if self._dir is None:
            return False
        cert, key = self._dir / "tls.crt", self._dir / "tls.key"
        stamp = _stamp(cert, key)
        if stamp is None or stamp == self._served:
            return False
        try:
            self.context.load_cert_chain(str(cert), str(key))
        except (OSError, ssl.SSLError) as err:
            log.warning(
                f"{self._what}: {cert} and {key} do not load as a certificate and its key; serving "
                "the previous one; put a PEM certificate chain and its unencrypted key there",
                extra={"error": str(err)},
            )
            self._served = stamp  # not again until they change
            return False
        self._served = stamp
        log.info(f"{self._what}: serving certificate loaded", extra={"cert": str(cert)})
        return True

    async def follow(self, *, every: float = CHECK_EVERY) -> None:
        """Reload whenever the pair changes, until cancelled."""
        if self._dir is None:
            return
        while True:
            await anyio.sleep(every)
            self.reload()

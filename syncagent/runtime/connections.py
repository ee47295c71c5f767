"""The agent's connections to the API server: a pool per kind of traffic, so no traffic can
take the connections another needs (docs/runtime.md §5).

- ``watches``: one HTTP/1.1 connection per open watch, and nothing else waits for them, so the
  pool has no cap: with ``--namespace`` every kind is watched per namespace, and a cap below
  the watch count would leave the watches beyond it unstarted.
- ``requests``: reads, writes, discovery, Events: httpx2's default pool (100 connections).
- ``lease``: the leader election's own connections, so a renewal never waits behind a
  reconcile's requests or a watch.
- ``reviews``: the TokenReviews and SubjectAccessReviews of ``/metrics``, so a flood of scrapes
  cannot hold the renewal's connection either.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import httpx2
from httpx2 import AsyncClient

from syncagent.runtime.client import make_client
from syncagent.runtime.metrics import Metrics

REQUEST_LIMITS = httpx2.Limits(max_connections=100, max_keepalive_connections=20)
# Unbounded: each watch holds its connection for minutes; idle ones beyond 20 are closed.
WATCH_LIMITS = httpx2.Limits(max_connections=None, max_keepalive_connections=20)
# A renewal is a GET then an update, one at a time; the second connection serves the release
# at shutdown while a renewal's connection is being torn down.
LEASE_LIMITS = httpx2.Limits(max_connections=2, max_keepalive_connections=2)
REVIEW_LIMITS = httpx2.Limits(max_connections=4, max_keepalive_connections=4)


@dataclass(frozen=True)
class Clients:
    """One lightkube client per pool; each counts its requests in the same metrics."""

    requests: AsyncClient
    watches: AsyncClient
    lease: AsyncClient
    reviews: AsyncClient

    @classmethod
    def sharing(cls, client: AsyncClient) -> Clients:
        """Every kind of traffic on ``client`` (tests that build one client)."""
        return cls(requests=client, watches=client, lease=client, reviews=client)


def make_clients(
    *,
    kubeconfig: str | os.PathLike[str] | None = None,
    context: str | None = None,
    timeout: float = 30.0,
    metrics: Metrics | None = None,
) -> Clients:
    """The agent's clients, one pool each (module doc)."""

    def client(limits: httpx2.Limits) -> AsyncClient:
        return make_client(
            kubeconfig=kubeconfig,
            context=context,
            timeout=timeout,
            metrics=metrics,
            limits=limits,
        )

    return Clients(
        requests=client(REQUEST_LIMITS),
        watches=client(WATCH_LIMITS),
        lease=client(LEASE_LIMITS),
        reviews=client(REVIEW_LIMITS),
    )

"""Leader election on a ``coordination.k8s.io/v1`` Lease (client-go's algorithm).

- A candidate takes the Lease when it is free (no holder) or expired: its holder has not
  renewed it for ``leaseDurationSeconds``, measured from when *this* candidate observed the
  last renewal (local monotonic clock, so clock skew between machines does not matter).
- The leader renews every ``retry_period``; when it cannot renew within ``renew_deadline``
  it stops leading (its work is cancelled) before anyone else may take over.
- On a clean exit the leader releases the Lease (no holder, 1 s duration) so a standby takes
  over at once. Updates use the Lease's resourceVersion, so two candidates never both win.
"""

from __future__ import annotations

import logging
import math
import os
import random
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import anyio
from lightkube import AsyncClient

from syncagent.runtime.client import request_json, status_code
from syncagent.runtime.metrics import Metrics, default_metrics

log = logging.getLogger(__name__)

Obj = dict[str, Any]


def micro_time(ts: float) -> str:
    """A ``MicroTime``: RFC 3339 with exactly six fractional digits, as the API server wants."""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def default_identity() -> str:
    """``<pod or host name>_<random>``: unique even for two agents on one host."""
    host = os.environ.get("POD_NAME") or socket.gethostname()
    return f"{host}_{uuid.uuid4()}"


@dataclass(frozen=True)
class LeaseConfig:
    namespace: str
    name: str = "syncagent"
    identity: str = ""
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    release_on_cancel: bool = True

    def __post_init__(self) -> None:
        if not self.identity:
            raise ValueError(f"Lease/{self.namespace}/{self.name}: identity must not be empty")
        if not self.lease_duration > self.renew_deadline > self.retry_period > 0:
            raise ValueError(
                f"Lease/{self.namespace}/{self.name}: need lease duration "
                f"({self.lease_duration}s) > renew deadline ({self.renew_deadline}s) > "
                f"retry period ({self.retry_period}s) > 0"
            )

    @property
    def path(self) -> str:
        return f"apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases"

    def __str__(self) -> str:
        return f"Lease/{self.namespace}/{self.name}"


class LeadershipLost(Exception):
    """The leader could not renew its Lease in time; its work was cancelled."""


class LeaderElector:
    def __init__(
        self,
        client: AsyncClient,
        config: LeaseConfig,
        *,
        metrics: Metrics | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._client = client
        self.config = config
        self._metrics = metrics or default_metrics()
        self._clock = clock
        self._observed: tuple[Any, ...] | None = None
        self._observed_at = 0.0
        self._observed_duration = config.lease_duration
        self._leader = False
        self._decided: anyio.Event | None = None
        self._is_decided = False
        self.last_renew: float | None = None  # monotonic time of the last successful write

    @property
    def is_leader(self) -> bool:
        return self._leader

    @property
    def decided(self) -> bool:
        """True once one attempt told whether this process leads or follows."""
        return self._is_decided

    async def wait_decided(self) -> None:
        while not self._is_decided:
            if self._decided is None:
                self._decided = anyio.Event()
            await self._decided.wait()

    # -- the election -------------------------------------------------------------------------
    async def run(self, lead: Callable[[], Awaitable[None]]) -> None:
        """Wait to lead, run ``lead()`` while leading, release the Lease when it returns.

        Raises :class:`LeadershipLost` when renewing fails; ``lead()`` is cancelled first.
        """
        await self._campaign()
        lost = False
        try:
            async with anyio.create_task_group() as tg:

                async def renew_then_cancel() -> None:
                    nonlocal lost
                    await self._keep_renewing()
                    lost = True
                    tg.cancel_scope.cancel()

                tg.start_soon(renew_then_cancel, name=f"renew {self.config}")
                await lead()
                tg.cancel_scope.cancel()
        finally:
            self._set_leader(False)
            if not lost and self.config.release_on_cancel:
                with anyio.CancelScope(shield=True), anyio.move_on_after(self.config.retry_period):
                    await self.release()
        if lost:
            raise LeadershipLost(f"{self.config}: could not renew within the renew deadline")

    async def _campaign(self) -> None:
        log.info(
            "waiting to lead", extra={"lease": str(self.config), "identity": self.config.identity}
        )
        while not await self._attempt():
            self._mark_decided()
            await anyio.sleep(self._follower_wait())
        self._set_leader(True)
        self._mark_decided()
        log.info("leading", extra={"lease": str(self.config), "identity": self.config.identity})

    def _follower_wait(self) -> float:
        # A follower notices a renewal only at its next poll, and counts the lease duration
        # from then. Polling twice per retry period (jitter only shortens the wait) and waking
        # right at the observed expiry keeps a takeover within lease duration + retry period
        # of the leader's last renewal, request latency included.
        poll = self.config.retry_period / 2 * (0.8 + 0.2 * random.random())
        until_expiry = self._observed_at + self._observed_duration - time.monotonic()
        return max(0.01, min(poll, until_expiry + 0.01))

    async def _keep_renewing(self) -> None:
        """Renew every retry period; return when a renewal did not succeed in time."""
        while True:
            await anyio.sleep(self.config.retry_period)
            renewed = False
            with anyio.move_on_after(self.config.renew_deadline):
                while True:
                    if await self._attempt():
                        renewed = True
                        break
                    await anyio.sleep(self.config.retry_period)
            if not renewed:
                log.error("leadership lost", extra={"lease": str(self.config)})
                return

    async def _attempt(self) -> bool:
        try:
            return await self._try_acquire_or_renew()
        except Exception as err:
            log.warning(
                "lease update failed",
                extra={"lease": str(self.config), "error": str(err) or type(err).__name__},
            )
            return False

    # -- one try ------------------------------------------------------------------------------
    async def _try_acquire_or_renew(self) -> bool:
        cfg = self.config
        try:
            lease = await request_json(self._client, "GET", f"{cfg.path}/{cfg.name}")
        except Exception as err:
            if status_code(err) != 404:
                raise
            return await self._create()
        spec = lease.get("spec") or {}
        holder = spec.get("holderIdentity") or ""
        self._observe(spec)
        if holder and holder != cfg.identity and not self._expired():
            return False
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": cfg.name,
                "namespace": cfg.namespace,
                "resourceVersion": lease["metadata"]["resourceVersion"],
            },
            "spec": self._spec(previous=spec),
        }
        try:
            updated = await request_json(self._client, "PUT", f"{cfg.path}/{cfg.name}", body=body)
        except Exception as err:
            if status_code(err) == 409:
                return False  # someone else updated it first
            raise
        self._observe(updated.get("spec") or {})
        self.last_renew = time.monotonic()
        return True

    async def _create(self) -> bool:
        cfg = self.config
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": cfg.name, "namespace": cfg.namespace},
            "spec": self._spec(previous=None),
        }
        try:
            created = await request_json(self._client, "POST", cfg.path, body=body)
        except Exception as err:
            if status_code(err) == 409:
                return False  # another candidate created it first
            raise
        self._observe(created.get("spec") or {})
        self.last_renew = time.monotonic()
        return True

    def _spec(self, *, previous: Obj | None) -> Obj:
        now = micro_time(self._clock())
        prev = previous or {}
        ours = prev.get("holderIdentity") == self.config.identity
        transitions = int(prev.get("leaseTransitions") or 0)
        if previous is not None and not ours:
            transitions += 1
        return {
            "holderIdentity": self.config.identity,
            "leaseDurationSeconds": math.ceil(self.config.lease_duration),
            "acquireTime": prev.get("acquireTime") if ours else now,
            "renewTime": now,
            "leaseTransitions": transitions,
        }

    def _observe(self, spec: Obj) -> None:
        record = (
            spec.get("holderIdentity"),
            spec.get("renewTime"),
            spec.get("acquireTime"),
            spec.get("leaseDurationSeconds"),
        )
        if record != self._observed:
            self._observed = record
            self._observed_at = time.monotonic()
            self._observed_duration = float(spec.get("leaseDurationSeconds") or 0)

    def _expired(self) -> bool:
        return time.monotonic() > self._observed_at + self._observed_duration

    async def release(self) -> None:
        """Give the Lease up if this process holds it (no holder, 1 s duration)."""
        cfg = self.config
        try:
            lease = await request_json(self._client, "GET", f"{cfg.path}/{cfg.name}")
            spec = lease.get("spec") or {}
            if spec.get("holderIdentity") != cfg.identity:
                return
            now = micro_time(self._clock())
            lease["spec"] = {
                "leaseDurationSeconds": 1,
                "acquireTime": now,
                "renewTime": now,
                "leaseTransitions": int(spec.get("leaseTransitions") or 0),
            }
            await request_json(self._client, "PUT", f"{cfg.path}/{cfg.name}", body=lease)
            log.info("lease released", extra={"lease": str(cfg)})
        except Exception as err:
            log.warning("lease release failed", extra={"lease": str(cfg), "error": str(err)})

    # -- state ------------------------------------------------------------------------------------
    def _set_leader(self, leader: bool) -> None:
        self._leader = leader
        self._metrics.leader.set(
            1 if leader else 0, lease=f"{self.config.namespace}/{self.config.name}"
        )

    def _mark_decided(self) -> None:
        self._is_decided = True
        if self._decided is not None:
            self._decided.set()
            self._decided = None

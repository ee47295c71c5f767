"""Leader election on a ``coordination.k8s.io/v1`` Lease (client-go's algorithm).

- A candidate takes the Lease when it is free (no holder) or expired: its holder has not
  renewed it for ``leaseDurationSeconds``, measured from when *this* candidate observed the
  last renewal (the local leadership clock, ``leaseclock``, which runs through suspend, so
  clock skew between machines does not matter).
- The leader renews every ``retry_period``. It leads only until ``renew_deadline`` after it
  *sent* its last renewal the server confirmed: the server stored that renewal after it was
  sent, and a follower counts the lease duration from when it read the renewal, later still,
  so the leader's work is cancelled before anyone may take over, however late the answer
  came, and :attr:`LeaderElector.fence` refuses every write sent after that deadline, even
  one whose task ran late (``fencing``). A read that shows another holder ends leading at once.
- On a clean exit the leader releases the Lease (no holder, 1 s duration) so a standby takes
  over at once. Updates use the Lease's resourceVersion, so two candidates never both win.
"""

from __future__ import annotations

import enum
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
from httpx2 import AsyncClient

from syncagent.rest.request import Request, build
from syncagent.rest.resource import Resource
from syncagent.rest.transport import call, status_code
from syncagent.runtime import leaseclock
from syncagent.runtime.fencing import Fence, not_leader
from syncagent.runtime.metrics import Metrics, Registry, default_metrics

log = logging.getLogger(__name__)

LEASE = Resource.of("coordination.k8s.io/v1", "Lease", "leases")

Obj = dict[str, Any]


class LeaderMetrics:
    """Whether this process leads."""

    def __init__(self, r: Registry) -> None:
        self.leader = r.gauge(
            "syncagent_leader", "1 while this process holds the leader Lease.", ("lease",)
        )


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

    def request(self, verb: str, body: Any = None) -> Request:
        """This Lease's ``get``, ``create`` or ``update`` request."""
        name = "" if verb == "create" else self.name
        return build(LEASE, verb, namespace=self.namespace, name=name, body=body)

    def paths(self) -> tuple[str, ...]:
        """The URL paths of this Lease's own requests (the fence lets them through)."""
        return (self.request("create").path, self.request("get").path)

    def __str__(self) -> str:
        return f"Lease/{self.namespace}/{self.name}"


class LeadershipLost(Exception):
    """The leader could not renew its Lease in time, or saw another holder; its work was
    cancelled."""


class Try(enum.Enum):
    """The outcome of one try to acquire or renew the Lease."""

    OURS = "ours"  # this process holds the Lease, confirmed by the server
    THEIRS = "theirs"  # a read showed another holder whose Lease has not expired
    FAILED = "failed"  # an error or a conflicting update: try again


class LeaderElector:
    def __init__(
        self,
        client: AsyncClient,
        config: LeaseConfig,
        *,
        metrics: Metrics | None = None,
        clock: Callable[[], float] = time.time,
        lease_clock: Callable[[], float] = leaseclock.now,
    ) -> None:
        self._client = client
        self.config = config
        self._metrics = metrics or default_metrics()
        self._clock = clock  # wall time, for the Lease's renewTime
        self._now = lease_clock  # every duration of the election
        # Closed unless leading; the manager installs it on the client that sends the writes.
        self.fence = Fence(lease=str(config), exempt=config.paths(), clock=lease_clock)
        self._observed: tuple[Any, ...] | None = None
        self._observed_at = 0.0
        self._observed_duration = config.lease_duration
        self._leader = False
        self._decided: anyio.Event | None = None
        self._is_decided = False
        # When (leadership clock) the last write the server confirmed was sent: leading ends
        # renew_deadline after it.
        self.last_renew: float | None = None

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

        Raises :class:`LeadershipLost` when leading ends early (no renewal in time, or another
        holder); ``lead()`` is cancelled first.
        """
        await self._campaign()
        lost = ""
        try:
            # The scope's deadline is the end of leading; only a confirmed renewal moves it.
            with anyio.CancelScope(deadline=self._loop_deadline()) as term:
                self.fence.open_until(self._lead_until(), on_expiry=term.cancel)
                try:
                    async with anyio.create_task_group() as tg:

                        async def renew_then_cancel() -> None:
                            nonlocal lost
                            lost = await self._keep_renewing(term)
                            tg.cancel_scope.cancel()

                        tg.start_soon(renew_then_cancel, name=f"renew {self.config}")
                        await lead()
                        tg.cancel_scope.cancel()
                except Exception as err:
                    # A write the fence refused ends leading as the deadline does.
                    if not_leader(err) is None:
                        raise
            if (term.cancelled_caught or self.fence.expired()) and not lost:
                lost = "could not renew within the renew deadline"
                log.error("leadership lost", extra={"lease": str(self.config), "error": lost})
        finally:
            self.fence.close()
            self._set_leader(False)
            if not lost and self.config.release_on_cancel:
                with anyio.CancelScope(shield=True), anyio.move_on_after(self.config.retry_period):
                    await self.release()
        if lost:
            raise LeadershipLost(f"{self.config}: {lost}; campaigning again")

    def _lead_until(self) -> float:
        """The end of leading on the leadership clock."""
        assert self.last_renew is not None
        return self.last_renew + self.config.renew_deadline

    def _loop_deadline(self) -> float:
        """:meth:`_lead_until` on the event loop's clock (which stops during suspend: the
        fence, on the leadership clock, refuses writes after a suspend however late this
        fires)."""
        return anyio.current_time() + self._lead_until() - self._now()

    async def _campaign(self) -> None:
        log.info(
            "waiting to lead", extra={"lease": str(self.config), "identity": self.config.identity}
        )
        while await self._attempt() is not Try.OURS:
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
        until_expiry = self._observed_at + self._observed_duration - self._now()
        return max(0.01, min(poll, until_expiry + 0.01))

    async def _keep_renewing(self, term: anyio.CancelScope) -> str:
        """Renew every retry period, moving ``term``'s deadline with each confirmed renewal;
        return why leading ends when a read shows another holder, or when the leadership
        clock passed the deadline before the loop's did (a suspend; ``term`` ends it else).
        """
        while True:
            await anyio.sleep(self.config.retry_period)
            outcome = await self._attempt()
            if outcome is Try.THEIRS:
                holder = (self._observed or ("",))[0]
                log.error("leadership lost", extra={"lease": str(self.config), "holder": holder})
                return f"the Lease is held by {holder}"
            # A renewal counts only while the deadline it would move has not passed.
            if outcome is Try.OURS and self.fence.extend(self._lead_until()):
                term.deadline = self._loop_deadline()
            elif self.fence.expired():
                lost = "could not renew within the renew deadline"
                log.error("leadership lost", extra={"lease": str(self.config), "error": lost})
                return lost

    async def _attempt(self) -> Try:
        try:
            return await self._try_acquire_or_renew()
        except Exception as err:
            log.warning(
                "lease update failed",
                extra={"lease": str(self.config), "error": str(err) or type(err).__name__},
            )
            return Try.FAILED

    # -- one try ------------------------------------------------------------------------------
    async def _try_acquire_or_renew(self) -> Try:
        cfg = self.config
        try:
            lease = await call(self._client, cfg.request("get"))
        except Exception as err:
            if status_code(err) != 404:
                raise
            return await self._create()
        spec = lease.get("spec") or {}
        holder = spec.get("holderIdentity") or ""
        self._observe(spec)
        if holder and holder != cfg.identity and not self._expired():
            return Try.THEIRS
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
        sent = self._now()
        try:
            updated = await call(self._client, cfg.request("update", body))
        except Exception as err:
            if status_code(err) == 409:
                return Try.FAILED  # someone else updated it first: the next read tells who
            raise
        self._observe(updated.get("spec") or {})
        self.last_renew = sent
        return Try.OURS

    async def _create(self) -> Try:
        cfg = self.config
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": cfg.name, "namespace": cfg.namespace},
            "spec": self._spec(previous=None),
        }
        sent = self._now()
        try:
            created = await call(self._client, cfg.request("create", body))
        except Exception as err:
            if status_code(err) == 409:
                return Try.FAILED  # another candidate created it first
            raise
        self._observe(created.get("spec") or {})
        self.last_renew = sent
        return Try.OURS

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
            self._observed_at = self._now()
            self._observed_duration = float(spec.get("leaseDurationSeconds") or 0)

    def _expired(self) -> bool:
        return self._now() > self._observed_at + self._observed_duration

    async def release(self) -> None:
        """Give the Lease up if this process holds it (no holder, 1 s duration)."""
        cfg = self.config
        try:
            lease = await call(self._client, cfg.request("get"))
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
            await call(self._client, cfg.request("update", lease))
            log.info("lease released", extra={"lease": str(cfg)})
        except Exception as err:
            log.warning("lease release failed", extra={"lease": str(cfg), "error": str(err)})

    # -- state ------------------------------------------------------------------------------------
    def _set_leader(self, leader: bool) -> None:
        self._leader = leader
        self._metrics.of(LeaderMetrics).leader.set(
            1 if leader else 0, lease=f"{self.config.namespace}/{self.config.name}"
        )

    def _mark_decided(self) -> None:
        self._is_decided = True
        if self._decided is not None:
            self._decided.set()
            self._decided = None

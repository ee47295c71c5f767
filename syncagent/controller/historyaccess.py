"""May this caller ``get`` that object? SubjectAccessReviews for the history API, remembered
briefly.

The caller is the one the API server's front proxy forwarded (``runtime/frontproxy.py``): user,
uid, groups and extra go into the review as they came. A verdict is remembered for ``ALLOWED_TTL``
(a grant) or ``DENIED_TTL`` (a refusal, so a new RoleBinding takes effect soon), at most
``MAX_REMEMBERED`` of them, oldest dropped first; at most ``REVIEWS_AT_ONCE`` reviews are in
flight. Callers cannot flood this with made-up identities: only the API server can name one.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import anyio

from syncagent.runtime.frontproxy import Caller
from syncagent.runtime.metricsauth import SUBJECT_ACCESS_REVIEW, Post

ALLOWED_TTL = 10.0
DENIED_TTL = 2.0
MAX_REMEMBERED = 1024
REVIEWS_AT_ONCE = 4


@dataclass(frozen=True, slots=True)
class Target:
    """What is asked about: ``name`` empty means every object of the resource there."""

    group: str
    resource: str
    namespace: str
    name: str


def review(caller: Caller, target: Target, *, verb: str = "get") -> dict[str, object]:
    """The SubjectAccessReview asking whether ``caller`` may ``verb`` ``target``."""
    attributes = {"verb": verb, "group": target.group, "resource": target.resource}
    if target.namespace:
        attributes["namespace"] = target.namespace
    if target.name:
        attributes["name"] = target.name
    spec: dict[str, object] = {
        "user": caller.user,
        "groups": list(caller.groups),
        "resourceAttributes": attributes,
    }
    if caller.uid:
        spec["uid"] = caller.uid
    if caller.extra:
        spec["extra"] = {k: list(v) for k, v in caller.extra.items()}
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}


Key = tuple[str, str, tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...], Target]


def _key(caller: Caller, target: Target) -> Key:
    extra = tuple(sorted((k, tuple(v)) for k, v in caller.extra.items()))
    return (caller.user, caller.uid, tuple(sorted(caller.groups)), extra, target)


class Access:
    """Answers "may get" with SubjectAccessReviews; remembers verdicts (see the module)."""

    def __init__(self, post: Post, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._post = post
        self._clock = clock
        self._remembered: OrderedDict[Key, tuple[bool, float]] = OrderedDict()
        self._reviews = anyio.CapacityLimiter(REVIEWS_AT_ONCE)

    async def may_get(self, caller: Caller, target: Target) -> bool:
        key = _key(caller, target)
        now = self._clock()
        kept = self._remembered.get(key)
        if kept is not None and kept[1] > now:
            return kept[0]
        async with self._reviews:
            answer = await self._post(SUBJECT_ACCESS_REVIEW, review(caller, target))
        allowed = bool((answer.get("status") or {}).get("allowed"))
        self._remember(key, allowed, now + (ALLOWED_TTL if allowed else DENIED_TTL))
        return allowed

    def _remember(self, key: Key, allowed: bool, until: float) -> None:
        self._remembered[key] = (allowed, until)
        self._remembered.move_to_end(key)
        while len(self._remembered) > MAX_REMEMBERED:
            self._remembered.popitem(last=False)

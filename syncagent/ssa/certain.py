"""When a write is certain, and how it targets exactly the object the caller saw
(docs/write-protocol.md).

A dry run answers one question: would this apply change anything? The engine asks it only when
the answer is unknown. It is known without a request when:

- the object does not exist (the apply creates it);
- our manager holds no Apply entry on the object (for that subresource) and the desired object
  sets a field: the apply adds the entry, so it changes at least ``managedFields``;
- the convergence cache recorded another desired digest at the object's current
  resourceVersion: nobody changed the object since we last converged it, and we now want
  something else.

Every write is targeted at what the caller saw (``targeted``). A write to an object the caller
saw carries that object's UID: the API server then refuses to create it when it is gone (409
"uid mismatch") and refuses a recreated copy (422, ``metadata.uid`` immutable), so a stale cache
view never re-creates an object that was just deleted. A write to an object the caller saw absent
carries a resourceVersion no object has (``CREATE_ONLY``): the server ignores it when it creates,
and refuses the write (409, "the object has been modified") when an object of that name exists,
before anything is stored. So a create never writes over an object it did not look at, and it
needs no read first. Neither field is tracked by managedFields, so this changes no ownership.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_IDENTITY = frozenset({"apiVersion", "kind"})
_META_IDENTITY = frozenset({"name", "namespace"})


def sets_fields(desired: Mapping[str, Any]) -> bool:
    """Whether an apply of ``desired`` owns any field (an empty apply owns none)."""
    if any(key not in _IDENTITY and key != "metadata" for key in desired):
        return True
    meta = desired.get("metadata") or {}
    return any(key not in _META_IDENTITY and meta[key] for key in meta)


def holds_entry(live: Mapping[str, Any], *, manager: str, subresource: str) -> bool:
    """Whether ``manager`` has an Apply entry on ``live`` for ``subresource``."""
    for entry in (live.get("metadata") or {}).get("managedFields") or ():
        if (
            entry.get("manager") == manager
            and entry.get("operation") == "Apply"
            and (entry.get("subresource") or "") == subresource
        ):
            return True
    return False


def write_is_certain(
    desired: Mapping[str, Any],
    live: Mapping[str, Any] | None,
    *,
    manager: str,
    subresource: str,
    recorded: tuple[str, str] | None,
    digest: str,
) -> bool:
    """Whether an apply of ``desired`` certainly changes ``live`` (see the module doc).

    ``recorded`` is the convergence cache's (digest, resourceVersion) for this object and manager.
    """
    if live is None:
        return True
    if sets_fields(desired) and not holds_entry(live, manager=manager, subresource=subresource):
        return True
    version = str((live.get("metadata") or {}).get("resourceVersion") or "")
    return recorded is not None and recorded[1] == version and recorded[0] != digest


# The largest resourceVersion the API server parses (uint64): etcd never reaches it.
CREATE_ONLY = "18446744073709551615"


def targeted(desired: Mapping[str, Any], live: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """A write of ``desired`` targeted at the object ``live`` is (``with_uid``), or, when ``live``
    is None, at no object (create-only). A deliberate resourceVersion precondition stays."""
    if live is not None or not is_create_only(desired):
        return with_uid(desired, live)
    return {
        **desired,
        "metadata": {**(desired.get("metadata") or {}), "resourceVersion": CREATE_ONLY},
    }


def is_create_only(desired: Mapping[str, Any]) -> bool:
    """Whether a write of ``desired`` to an object seen absent is create-only: it carries no
    resourceVersion precondition of its own."""
    return not (desired.get("metadata") or {}).get("resourceVersion")


def with_uid(desired: Mapping[str, Any], live: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """``desired`` targeted at the object ``live`` is (its UID), or unchanged without one."""
    uid = ((live or {}).get("metadata") or {}).get("uid")
    if not uid:
        return desired
    return {**desired, "metadata": {**(desired.get("metadata") or {}), "uid": uid}}

"""Known API-server quirks that make a dry-run result and the live object differ.

Every normaliser here is applied to BOTH sides of the comparison (docs/write-protocol.md §1), so it
may only erase differences that carry no meaning. Each names the upstream issue it works around.
Nothing outside this module special-cases server behaviour.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

Normaliser = Callable[[dict[str, Any]], None]


def _drop_empty_metadata_collections(obj: dict[str, Any]) -> None:
    # When SSA removes the last label, annotation or owner reference, the server keeps the
    # emptied container (`labels: {}`; seen on kube-apiserver v1.36.3), while an object that
    # never had one omits it, and views decoded by typed clients drop empty maps. Empty and
    # absent mean the same for these fields. No upstream issue tracks this representation
    # difference (it is structured-merge-diff keeping emptied parents, not a bug report);
    # revisit if one is filed.
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return
    for field in ("labels", "annotations", "ownerReferences"):
        if field in meta and not meta[field]:
            del meta[field]


NORMALISERS: tuple[Normaliser, ...] = (_drop_empty_metadata_collections,)


def normalise(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``obj`` with every known quirk erased."""
    out = copy.deepcopy(dict(obj))
    for normaliser in NORMALISERS:
        normaliser(out)
    return out

"""The differential comparison: what upstream's own code wrote against ``syncagent render``.

Pure: no I/O. For one graph on one pathway, upstream's objects (from the harness,
``upstream_harness.py``) are cleaned of what the server assigns, edited by exactly the
deliberate differences of ``docs/parity.md`` that name the case, and matched per object (kind
and name) with ours; then every field is compared. What remains is a list of divergences, each
with its path, upstream's value and ours.

Representation, not rendering, is normalised on both sides, and nothing else:

- fields the API server assigns (``uid``, ``resourceVersion``, ``creationTimestamp``,
  ``generation``, ``managedFields``) and an owner reference's ``uid`` (assigned at creation;
  kind, name and the controller flags are compared);
- ``null``, ``""``, ``{}`` and ``[]``: Go serialises zero values of fields without
  ``omitempty`` that way (``creationTimestamp: null``, ``resources: {}``, a LeaderWorkerSet's
  ``rolloutStrategy.type: ""``); every reader of these objects is Go code (the API server's
  native types, the LWS, Grove and Dynamo controllers), for which they and absence are the same
  unset field. Pruned before the server dry run too, which would refuse ``""`` where a CRD
  enumerates values (a real cluster's LWS webhook defaults it first).

List order is compared: a reordered ``env`` or ``ports`` is a different pod template, whose hash
rolls every pod.
"""

from __future__ import annotations

import copy
import enum
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tests.support.golden_contract import EXISTS, NOTEXISTS, STRICT
from tests.support.parity_differences import Difference, apply_differences

SERVER_METADATA = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields")
# The graph is the user's input, not something rendered from it: upstream's bookkeeping on it
# (its workload-provider lock, worker-hash annotation, finalizer, status) is state, compared by
# the status tests, not here.
INPUT_KINDS = frozenset({"DynamoGraphDeployment"})
LWS_API_VERSION = "leaderworkerset.x-k8s.io/v1"
GRAPH_LABEL = "nvidia.com/dynamo-graph-deployment-name"
COMPONENT_LABEL = "nvidia.com/dynamo-component"
_MISSING: Any = object()
# Marks an object the API server refused on one side: matched, never compared field by field.
REFUSED = "$refused"


class Pathway(enum.StrEnum):
    COMPONENT = "component"
    GROVE = "grove"
    DISAGGREGATEDSET = "disaggregatedset"

    @property
    def upstream_grove(self) -> bool:
        """Upstream has no DisaggregatedSet: a DS role compares with its LeaderWorkerSet, which
        upstream renders on its Component pathway."""
        return self is Pathway.GROVE


@dataclass(frozen=True, slots=True)
class Divergence:
    kind: str
    name: str
    path: str
    upstream: Any
    ours: Any

    def __str__(self) -> str:
        return (
            f"{self.kind}/{self.name}: {self.path}: upstream={show(self.upstream)} "
            f"syncagent={show(self.ours)}"
        )


def show(value: Any) -> str:
    if value is _MISSING or value == NOTEXISTS:
        return "<absent>"
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 400 else text[:400] + "..."


# -- normalisation ----------------------------------------------------------------------------


def prune(node: Any) -> Any:
    """``node`` without ``null``, ``{}`` and ``[]`` at any depth (see the module docstring)."""
    if isinstance(node, dict):
        out = {k: prune(v) for k, v in node.items()}
        return {k: v for k, v in out.items() if not _empty(v)}
    if isinstance(node, list):
        items = [prune(v) for v in node]
        return [v for v in items if v is not None]
    return node


def _empty(value: Any) -> bool:
    return value is None or value in ("", {}, [])


def clean(obj: Mapping[str, Any]) -> dict[str, Any]:
    """One object with what the server assigns removed, then pruned."""
    out = copy.deepcopy(dict(obj))
    metadata = out.get("metadata") or {}
    for key in SERVER_METADATA:
        metadata.pop(key, None)
    for ref in metadata.get("ownerReferences") or []:
        ref.pop("uid", None)
    return prune(out)


LABEL_VALUE_MAX = 63
# A LeaderWorkerSet's worker StatefulSet labels its pods controller-revision-hash=<lws>-<group>-
# <hash>, which must fit a label value: with a longer name no worker pod is ever created.
LWS_NAME_MAX = 41


def overlong_labels(obj: Any, path: str = "") -> list[str]:
    """Label values anywhere in ``obj`` (pod templates and cliques included) longer than a label
    value may be: the API server accepts a custom resource carrying one, then refuses every pod
    made from it, so upstream cannot run the graph."""
    found: list[str] = []
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key == "labels" and isinstance(value, dict):
                found += [
                    f"{path}.labels.{k}: {len(str(v))} characters"
                    for k, v in value.items()
                    if len(str(v)) > LABEL_VALUE_MAX
                ]
            else:
                found += overlong_labels(value, f"{path}.{key}" if path else key)
    elif isinstance(obj, list):
        for item in obj:
            found += overlong_labels(item, path + "[]")
    return found


def pods_never_created(obj: Mapping[str, Any]) -> list[str]:
    """Why the pods of ``obj`` (one of upstream's objects) could never be created, though the
    API server stores the object itself."""
    found = overlong_labels(obj)
    name = str((obj.get("metadata") or {}).get("name", ""))
    if obj.get("kind") == "LeaderWorkerSet" and len(name) > LWS_NAME_MAX:
        found.append(f"name: {len(name)} characters, more than {LWS_NAME_MAX}")
    return found


def refused_stub(obj: Mapping[str, Any]) -> dict[str, Any]:
    metadata = obj.get("metadata") or {}
    return {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "metadata": {"name": metadata.get("name"), "namespace": metadata.get("namespace")},
        REFUSED: True,
    }


# -- our side ---------------------------------------------------------------------------------


def ours_for_comparison(
    rendered: Sequence[Mapping[str, Any]], *, pathway: Pathway
) -> list[dict[str, Any]]:
    """``syncagent render -o json`` items as objects to match. On the DisaggregatedSet pathway
    only the DS is compared, as one LeaderWorkerSet per role, named as upstream names the LWS of
    that component (D1 applied), holding only the role's spec: the role *is* that LWS's spec,
    its metadata is the DS's. The graph's other components render as on the Component pathway,
    whose cases compare them."""
    if pathway is Pathway.DISAGGREGATEDSET:
        sets = [i["object"] for i in rendered if i["object"].get("kind") == "DisaggregatedSet"]
        return [w for ds in sets for w in _role_workloads(ds)]
    return [clean(item["object"]) for item in rendered]


def _role_workloads(ds: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    # The graph's name, not the DS's: a long graph name gives the DS a shortened one.
    labels = ds["metadata"].get("labels") or {}
    graph = labels.get(GRAPH_LABEL, ds["metadata"]["name"])
    for role in ds["spec"]["roles"]:
        yield prune(
            {
                "apiVersion": LWS_API_VERSION,
                "kind": "LeaderWorkerSet",
                "metadata": {"name": f"{graph}-{_role_component(role)}-0"},
                "spec": role.get("spec"),
            }
        )


def _role_component(role: Mapping[str, Any]) -> str:
    """The component a role renders, as upstream names its LWS: the role's name is its own
    (a recipe's ``prefillWorker`` component is role ``prefill``), the template's component
    label is the component's."""
    template = (role.get("spec") or {}).get("leaderWorkerTemplate", {}).get("leaderTemplate", {})
    labels = (template.get("metadata") or {}).get("labels") or {}
    return str(labels.get(COMPONENT_LABEL, role["name"])).lower()


def upstream_for_comparison(
    objects: Sequence[Mapping[str, Any]], *, pathway: Pathway
) -> list[dict[str, Any]]:
    out = [clean(o) for o in objects if o.get("kind") not in INPUT_KINDS]
    if pathway is Pathway.DISAGGREGATEDSET:
        # Upstream's LeaderWorkerSets against the DS roles, and only those (ours_for_comparison).
        out = [_spec_only(o) for o in out if o.get("kind") == "LeaderWorkerSet"]
    return out


def _key(obj: Mapping[str, Any]) -> tuple[str, str]:
    return str(obj.get("kind")), str((obj.get("metadata") or {}).get("name"))


def _spec_only(obj: Mapping[str, Any]) -> dict[str, Any]:
    if REFUSED in obj:
        return dict(obj)
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "metadata": {"name": obj["metadata"]["name"]},
        "spec": obj.get("spec", {}),
    }


# -- comparison -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Comparison:
    divergences: list[Divergence]
    edits: dict[str, int]  # per listed difference: how many edits it made to upstream's objects


def compare(
    upstream: Sequence[Mapping[str, Any]],
    ours: Sequence[Mapping[str, Any]],
    differences: Sequence[Difference],
) -> Comparison:
    """Upstream's objects edited by ``differences`` (already filtered to the case), matched with
    ours by kind and name, then compared field by field."""
    edited, edits = apply_differences(upstream, differences)
    found: list[Divergence] = []
    theirs = _by_key(edited)
    mine = _by_key([dict(o) for o in ours])
    for key in sorted(set(theirs) | set(mine)):
        kind, name = key
        if key not in mine:
            found.append(Divergence(kind, name, "(object)", "rendered", _MISSING))
        elif key not in theirs:
            found.append(Divergence(kind, name, "(object)", _MISSING, "rendered"))
        elif REFUSED not in theirs[key] and REFUSED not in mine[key]:
            found.extend(_diff(kind, name, "", theirs[key], mine[key]))
    return Comparison(found, edits)


def _by_key(objects: Sequence[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for obj in objects:
        key = _key(obj)
        if key in out:
            raise AssertionError(f"two objects {key[0]}/{key[1]} on one side")
        out[key] = obj
    return out


def _absent(value: Any) -> bool:
    return value is _MISSING or value == NOTEXISTS


def _diff(kind: str, name: str, path: str, up: Any, ours: Any) -> Iterator[Divergence]:
    if _absent(up) and _absent(ours):
        return
    if up == EXISTS and not _absent(ours):
        return  # a deliberate difference of docs/parity.md: our own value, present
    # A mapping on one side only is compared key by key, so each key is reported on its own.
    if isinstance(up, dict) and _absent(ours):
        ours = {}
    elif isinstance(ours, dict) and _absent(up):
        up = {}
    if isinstance(up, dict) and isinstance(ours, dict):
        for key in sorted((set(up) | set(ours)) - {STRICT}):
            yield from _diff(
                kind, name, _join(path, key), up.get(key, _MISSING), ours.get(key, _MISSING)
            )
        return
    if isinstance(up, list) and isinstance(ours, list):
        yield from _diff_lists(kind, name, path, up, ours)
        return
    if _absent(up) or _absent(ours) or up != ours:
        yield Divergence(kind, name, path or "(root)", up, ours)


def _join(path: str, key: str) -> str:
    part = f'"{key}"' if any(c in key for c in "./[]=*") else key
    return f"{path}.{part}" if path else part


def _names(items: Sequence[Any]) -> list[str] | None:
    """The ``name`` of every item when all are mappings with distinct names, else ``None``."""
    names = [i.get("name") if isinstance(i, dict) else None for i in items]
    if any(not isinstance(n, str) for n in names) or len(set(names)) != len(names):
        return None
    return [str(n) for n in names]


def _diff_lists(
    kind: str, name: str, path: str, up: list[Any], ours: list[Any]
) -> Iterator[Divergence]:
    up_names, our_names = _names(up), _names(ours)
    if up_names is not None and our_names is not None:
        # Named items (containers, env, ports, volumes...): per item, then their order.
        theirs, mine = dict(zip(up_names, up, strict=True)), dict(zip(our_names, ours, strict=True))
        for item in sorted(set(theirs) | set(mine)):
            up_item, our_item = theirs.get(item, _MISSING), mine.get(item, _MISSING)
            if _absent(up_item) or _absent(our_item):
                # An item on one side only is one finding, not one per field.
                yield Divergence(kind, name, f"{path}[name={item}]", up_item, our_item)
            else:
                yield from _diff(kind, name, f"{path}[name={item}]", up_item, our_item)
        common = [n for n in up_names if n in mine]
        if common != [n for n in our_names if n in theirs]:
            yield Divergence(kind, name, f"{path} (order of names)", up_names, our_names)
        return
    if len(up) == len(ours) and all(isinstance(i, dict) for i in up + ours):
        for index, (a, b) in enumerate(zip(up, ours, strict=True)):
            yield from _diff(kind, name, f"{path}[{index}]", a, b)
        return
    if up != ours:
        yield Divergence(kind, name, path, up, ours)

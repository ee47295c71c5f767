"""What the graphs of a namespace should have, against what the server holds (no tests here).

The expected objects come from the product's offline renderer (``syncagent render`` on the live
graphs, in a subprocess, as a user would run it); the live ones from listing every kind it
renders. An object is the agent's when an owner reference names a graph or a component
(DynamoComponentDeployment), or a ``syncagent/…`` field manager wrote it.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

import orjson
import yaml

from tests.support.kube import DCD, DGD, Kube

OWNER_KINDS = frozenset({DGD, DCD})
Key = tuple[str, str]  # (kind, name)


@dataclass
class Inventory:
    expected: set[Key] = field(default_factory=set)
    live: dict[Key, dict[str, Any]] = field(default_factory=dict)
    owners: set[str] = field(default_factory=set)  # UIDs of live graphs and components

    @property
    def lost(self) -> list[Key]:
        return sorted(self.expected - set(self.live))

    @property
    def extra(self) -> list[Key]:
        """The agent's objects no graph renders: duplicates or leftovers."""
        return sorted(set(self.live) - self.expected)

    @property
    def orphaned(self) -> list[Key]:
        """The agent's objects with an owner reference to a graph or component that is gone."""
        return sorted(
            key
            for key, obj in self.live.items()
            if any(
                r.get("kind") in OWNER_KINDS and r.get("uid") not in self.owners
                for r in obj["metadata"].get("ownerReferences") or ()
            )
        )

    def summary(self) -> str:
        return (
            f"{len(self.expected)} objects rendered, {len(self.live)} live: "
            f"{len(self.lost)} lost, {len(self.extra)} duplicated or extra, "
            f"{len(self.orphaned)} orphaned"
        )


def rendered(graphs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``syncagent render -o json`` of the graphs (what the agent's programs apply)."""
    docs = [
        {
            "apiVersion": g["apiVersion"],
            "kind": g["kind"],
            "metadata": {
                k: g["metadata"][k]
                for k in ("name", "namespace", "annotations")
                if k in g["metadata"]
            },
            "spec": g["spec"],
        }
        for g in graphs
    ]
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "syncagent.cli.main",
            "render",
            "-f",
            "-",
            "-o",
            "json",
            "--capability",
            "grove=false",
        ],
        input=yaml.safe_dump_all(docs).encode(),
        capture_output=True,
        check=True,
    )
    return [item["object"] for item in orjson.loads(out.stdout)]


def _is_agents(obj: dict[str, Any]) -> bool:
    meta = obj["metadata"]
    if any(r.get("kind") in OWNER_KINDS for r in meta.get("ownerReferences") or ()):
        return True
    return any(
        str(m.get("manager", "")).startswith("syncagent/") for m in meta.get("managedFields") or ()
    )


def take(kube: Kube, ns: str) -> Inventory:
    graphs = kube.list(DGD, ns)
    inv = Inventory()
    objects = rendered(graphs)
    inv.expected = {(o["kind"], o["metadata"]["name"]) for o in objects}
    inv.owners = {g["metadata"]["uid"] for g in graphs}
    inv.owners |= {c["metadata"]["uid"] for c in kube.list(DCD, ns)}
    for kind in sorted({o["kind"] for o in objects}):
        for obj in kube.list(kind, ns):
            if _is_agents(obj):
                inv.live[(kind, obj["metadata"]["name"])] = obj
    return inv

"""The toy pathway's workload kind and its CRD (no controller: a ToySet is ready once its
``status.ready`` is true, which the test sets as a controller would)."""

from __future__ import annotations

from typing import Any

from syncagent.rest.resource import Resource

TOY = Resource.of("toy.example.com/v1", "ToySet", "toysets")
OPT_IN = "toy.example.com/enabled"

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    },
}

CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"{TOY.plural}.{TOY.group}"},
    "spec": {
        "group": TOY.group,
        "names": {
            "kind": TOY.kind,
            "listKind": f"{TOY.kind}List",
            "plural": TOY.plural,
            "singular": TOY.kind.lower(),
        },
        "scope": "Namespaced",
        "versions": [
            {
                "name": TOY.version,
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": _SCHEMA},
            }
        ],
    },
}

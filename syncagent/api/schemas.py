"""Our CRD schemas as the offline commands and the agent check documents against them.

Kept out of ``syncagent.api``'s package namespace: the schemas are generated from the models
and the vendored Kubernetes schemas (a file read), and ``render/`` imports ``syncagent.api``
but must stay free of I/O.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Mapping
from functools import cache
from typing import Any

import orjson

from syncagent.api import crdgen, schemacheck, unknown
from syncagent.api.component import VERSION, DynamoComponentDeployment
from syncagent.api.graph import DGD_KIND, DynamoGraphDeployment
from syncagent.api.load import (
    LoadError,
    check_head,
    object_ref,
    objects_of,
    parse_object,
    summary,
)

Ours = DynamoGraphDeployment | DynamoComponentDeployment


def check_schema(doc: dict[str, Any]) -> schemacheck.Result:
    """The structural check of a v1beta1 DGD/DCD document against our CRD schema."""
    return schemacheck.check(doc, _schema(str(doc.get("kind"))))


class LiveChecks:
    """:func:`check_schema` of live objects, remembered by content: the agent checks a graph
    on every reconcile, and most reconciles follow a status change, which does not change the
    answer. One per agent (or plan), made where it is put together; the bound keeps it small."""

    def __init__(self, *, size: int = 8192) -> None:
        self._size = size
        self._found: OrderedDict[bytes, schemacheck.Result] = OrderedDict()

    def check(self, doc: Mapping[str, Any]) -> schemacheck.Result:
        """The check of ``doc`` without its status (written by us, validated by the API
        server) and without metadata beyond the name."""
        checked = {k: v for k, v in doc.items() if k != "status"}
        meta = doc.get("metadata")
        if isinstance(meta, dict):
            checked["metadata"] = {k: meta[k] for k in ("name", "generateName") if k in meta}
        try:
            key = hashlib.sha256(orjson.dumps(checked, option=orjson.OPT_SORT_KEYS)).digest()
        except (TypeError, orjson.JSONEncodeError):  # nested past what orjson writes
            return check_schema(checked)
        found = self._found.get(key)
        if found is None:
            found = self._found[key] = check_schema(checked)
            if len(self._found) > self._size:
                self._found.popitem(last=False)
        else:
            self._found.move_to_end(key)
        return found


def unknown_field_warnings(doc: dict[str, Any]) -> list[str]:
    """``Kind/namespace/name: <path>: unknown field ...`` lines for a v1beta1 DGD/DCD."""
    ref = object_ref(doc)
    return [f"{ref}: {line}" for line in unknown.warnings(check_schema(doc).unknown)]


def parse_checked(doc: dict[str, Any], *, source: str = "-") -> Ours:
    """:func:`parse_object` after the CRD's structural rules (the API server's words)."""
    ref = check_head(doc, source=source)
    found = check_schema(doc).errors
    if found:
        raise LoadError(f"{ref}: {summary([str(f) for f in found])}")
    return parse_object(doc, source=source)


def objects_checked(docs: list[dict[str, Any]], *, source: str = "-") -> list[Ours]:
    """Every DGD and DCD of ``docs``, checked and parsed, in order; other documents skipped."""
    return objects_of(docs, source=source, parse=parse_checked)


@cache
def _schema(kind: str) -> dict[str, Any]:
    crd = crdgen.graph_crd() if kind == DGD_KIND else crdgen.component_crd()
    (served,) = [v for v in crd["spec"]["versions"] if v["name"] == VERSION]
    return dict(served["schema"]["openAPIV3Schema"])

"""Generate our CRDs (DGD, DCD) from the pydantic models.

Each model field becomes a schema property named by its wire alias. Python types map to
OpenAPI types; ``Crd`` annotations add the CRD-only facts (bounds, patterns, defaults, list types,
CEL rules) and ``Crd(kube=...)`` embeds a Kubernetes type's structural schema. A model class may
declare ``__crd__ = {"preserve_unknown": bool, "validations": [...]}``.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Union

import yaml
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from syncagent.api.base import Crd
from syncagent.api.component import (
    DCD_KIND,
    GROUP,
    MAIN_CONTAINER,
    VERSION,
    DynamoComponentDeploymentSpec,
    DynamoComponentDeploymentStatus,
)
from syncagent.api.graph import DGD_KIND, GraphSpec, GraphStatus
from syncagent.api.kubeschema import VENDORED, kube_schema, vendored_text

HEADER = "# Generated from syncagent.api by `python -m syncagent.cli.generate`; do not edit (tests/policy/test_generated_drift.py).\n"

# The upstream CEL rule on embedded containers: `main` may get its image elsewhere (V5 is ours).
SIDECAR_IMAGE_RULE = {
    "rule": f'self.name == "{MAIN_CONTAINER}" || (has(self.image) && self.image != "")',
    "message": "sidecar containers must specify a non-empty image",
}
_PRINTER_AGE = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
_PRINTER_BACKEND = {
    "name": "Backend",
    "type": "string",
    "description": "Backend framework (sglang, vllm, trtllm)",
    "jsonPath": ".spec.backendFramework",
}


class SchemaBuilder:
    """Turns model classes into structural OpenAPI v3 schemas."""

    def model(self, cls: type[BaseModel]) -> dict[str, Any]:
        props: dict[str, Any] = {}
        required: list[str] = []
        for name, field in cls.model_fields.items():
            key = field.alias or name
            props[key] = self.field(field)
            if field.is_required():
                required.append(key)
        out: dict[str, Any] = {"type": "object", "properties": dict(sorted(props.items()))}
        if required:
            out["required"] = sorted(required)
        extra = getattr(cls, "__crd__", {})
        if extra.get("preserve_unknown"):
            out["x-kubernetes-preserve-unknown-fields"] = True
        if extra.get("validations"):
            out["x-kubernetes-validations"] = [dict(v) for v in extra["validations"]]
        return out

    def field(self, field: FieldInfo) -> dict[str, Any]:
        crd = next((m for m in field.metadata if isinstance(m, Crd)), None)
        if crd and crd.kube:
            schema = self.kube(crd.kube)
        elif crd and "anyOf" in crd.schema:
            schema = {}
        else:
            schema = self.annotation(field.annotation)
        if crd:
            schema.update(json.loads(json.dumps(crd.schema)))
        return schema

    def kube(self, name: str) -> dict[str, Any]:
        if name.endswith("[]"):
            return {"type": "array", "items": kube_schema(name[:-2])}
        return kube_schema(name)

    def annotation(self, tp: Any) -> dict[str, Any]:
        tp = _strip_optional(tp)
        origin = typing.get_origin(tp)
        if origin is Literal:
            return {"type": "string", "enum": list(typing.get_args(tp))}
        if origin is list:
            (item,) = typing.get_args(tp)
            return {"type": "array", "items": self.annotation(item)}
        if origin is dict:
            _, value = typing.get_args(tp)
            if value is Any:
                return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
            return {"type": "object", "additionalProperties": self.annotation(value)}
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            return self.model(tp)
        scalar = {str: "string", bool: "boolean", int: "integer", float: "number"}.get(tp)
        if scalar is None:
            raise TypeError(f"no CRD schema for type {tp!r}; annotate the field with Crd(...)")
        return {"type": scalar}


def _strip_optional(tp: Any) -> Any:
    if typing.get_origin(tp) in (Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return tp


def _with_sidecar_rule(spec_schema: dict[str, Any]) -> None:
    pod_spec = spec_schema["properties"]["podTemplate"]["properties"]["spec"]
    items = pod_spec["properties"]["containers"]["items"]
    items["x-kubernetes-validations"] = [dict(SIDECAR_IMAGE_RULE)]


def graph_crd(*, pathways: Sequence[str] = ()) -> dict[str, Any]:
    """The DGD CRD; ``pathways`` (the program registry's, in precedence order) are the enum of
    ``status.routing.pathway``. Without them (the offline structural check of a live graph)
    any pathway name passes: the API server holds the enum."""
    builder = SchemaBuilder()
    spec = builder.model(GraphSpec)
    _with_sidecar_rule(spec["properties"]["components"]["items"])
    ready = '.status.conditions[?(@.type=="Ready")].status'
    columns = [
        {
            "name": "Ready",
            "type": "string",
            "description": "Ready status of the graph deployment",
            "jsonPath": ready,
        },
        _PRINTER_BACKEND,
        _PRINTER_AGE,
    ]
    status = builder.model(GraphStatus)
    if pathways:
        status["properties"]["routing"]["properties"]["pathway"]["enum"] = list(pathways)
    return _crd(DGD_KIND, "dgd", spec, status, columns)


def component_crd() -> dict[str, Any]:
    builder = SchemaBuilder()
    spec = builder.model(DynamoComponentDeploymentSpec)
    _with_sidecar_rule(spec)
    available = ".status.conditions[?(@.type=='Available')].status"
    columns = [
        {"name": "Available", "type": "string", "description": "Available", "jsonPath": available},
        _PRINTER_BACKEND,
        _PRINTER_AGE,
    ]
    status = builder.model(DynamoComponentDeploymentStatus)
    return _crd(DCD_KIND, "dcd", spec, status, columns)


def _crd(
    kind: str,
    short: str,
    spec: dict[str, Any],
    status: dict[str, Any],
    columns: list[dict[str, Any]],
) -> dict[str, Any]:
    plural = kind.lower() + "s"
    root = {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": spec,
            "status": status,
        },
    }
    # Kept (not served) so existing status.storedVersions stay valid; `convert` handles it.
    legacy = {
        "name": "v1alpha1",
        "served": False,
        "storage": False,
        "schema": {
            "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        },
    }
    current = {
        "name": VERSION,
        "served": True,
        "storage": True,
        "subresources": {"status": {}},
        "additionalPrinterColumns": columns,
        "schema": {"openAPIV3Schema": root},
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "names": {
                "kind": kind,
                "listKind": f"{kind}List",
                "plural": plural,
                "singular": kind.lower(),
                "shortNames": [short],
            },
            "scope": "Namespaced",
            "conversion": {"strategy": "None"},
            "versions": [legacy, current],
        },
    }


def checkpoint_crd() -> dict[str, Any]:
    """``nvidia.com/v1alpha1`` DynamoCheckpoint: read only by the agent (checkpoint readiness,
    docs/api.md §2); ``spec`` is opaque, ``status.phase`` is what readiness reads."""
    from syncagent.api.checkpoint import (
        CHECKPOINT_API_VERSION,
        CHECKPOINT_KIND,
        CHECKPOINT_PLURAL,
        CHECKPOINT_SHORT_NAME,
    )

    group, version = CHECKPOINT_API_VERSION.split("/")
    root = {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            "status": {
                "type": "object",
                "properties": {"phase": {"type": "string"}},
                "x-kubernetes-preserve-unknown-fields": True,
            },
        },
    }
    phase = {"name": "Phase", "type": "string", "jsonPath": ".status.phase"}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{CHECKPOINT_PLURAL}.{group}"},
        "spec": {
            "group": group,
            "names": {
                "kind": CHECKPOINT_KIND,
                "listKind": f"{CHECKPOINT_KIND}List",
                "plural": CHECKPOINT_PLURAL,
                "singular": CHECKPOINT_KIND.lower(),
                "shortNames": [CHECKPOINT_SHORT_NAME],
            },
            "scope": "Namespaced",
            "versions": [
                {
                    "name": version,
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": [phase, _PRINTER_AGE],
                    "schema": {"openAPIV3Schema": root},
                }
            ],
        },
    }


def scaling_adapter_crd() -> dict[str, Any]:
    """The DGDSA CRD, served at ``v1beta1`` with ``/scale`` as upstream's (docs/api.md §4)."""
    from syncagent.api.scalingadapter import (
        ADAPTER_KIND,
        ADAPTER_SHORT_NAME,
        ScalingAdapterSpec,
        ScalingAdapterStatus,
    )

    builder = SchemaBuilder()
    columns = [
        {"name": "DGD", "type": "string", "jsonPath": ".spec.dgdRef.name"},
        {"name": "Component", "type": "string", "jsonPath": ".spec.dgdRef.componentName"},
        {"name": "Replicas", "type": "integer", "jsonPath": ".status.replicas"},
        _PRINTER_AGE,
    ]
    spec, status = builder.model(ScalingAdapterSpec), builder.model(ScalingAdapterStatus)
    crd = _crd(ADAPTER_KIND, ADAPTER_SHORT_NAME, spec, status, columns)
    crd["spec"]["versions"][1]["subresources"]["scale"] = {
        "specReplicasPath": ".spec.replicas",
        "statusReplicasPath": ".status.replicas",
        "labelSelectorPath": ".status.selector",
    }
    return crd


def all_crds(*, pathways: Sequence[str]) -> list[dict[str, Any]]:
    return [graph_crd(pathways=pathways), component_crd(), checkpoint_crd(), scaling_adapter_crd()]


def crd_filename(crd: dict[str, Any]) -> str:
    return f"{crd['spec']['group']}_{crd['spec']['names']['plural']}.yaml"


def to_yaml(crd: dict[str, Any]) -> str:
    """The file text: a header line and block-style YAML, stable across runs."""
    body = yaml.safe_dump(crd, sort_keys=False, default_flow_style=False, width=100)
    return HEADER + body


def rendered_files(*, pathways: Sequence[str]) -> dict[str, str]:
    """File name -> content of every CRD file under ``crds/``."""
    return {crd_filename(c): to_yaml(c) for c in all_crds(pathways=pathways)}


def write(directory: Path, *, pathways: Sequence[str]) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in rendered_files(pathways=pathways).items():
        target = directory / name
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written


def refresh_vendored(openapi: Path) -> Path:
    """Refresh the vendored Kubernetes schemas from the pinned OpenAPI v3 core/v1 document."""
    VENDORED.write_text(vendored_text(path=openapi), encoding="utf-8")
    return VENDORED

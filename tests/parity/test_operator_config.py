"""syncagent's model of upstream's OperatorConfiguration declares exactly upstream's fields:
every JSON field of upstream's Go types (api/config/v1alpha1/types.go, read from the source
tarball in $SYNCAGENT_REFERENCE), nested as upstream nests them, and none of its own.

Upstream's source holds no example configuration file (its chart is not in the tarball), so the
check runs on its types; the Go defaults and validation are in the unit tests."""

from __future__ import annotations

import re
import tarfile
import typing

from pydantic import BaseModel

from syncagent.api.operatorconfig import OperatorConfiguration
from tests.support.upstream_source import OPERATOR_TARBALL, reference_root

TYPES = "deploy/operator/api/config/v1alpha1/types.go"
STRUCT = re.compile(r"^type (\w+) struct \{\n(.*?)^\}", re.S | re.M)
# Go's own types the file inlines: metav1.TypeMeta.
EXTERNAL = {"TypeMeta": {"apiVersion", "kind"}}
FIELD = re.compile(r"^\s+(?:\w+\s+)?([\w.*\[\]]+)\s+`json:\"([^\"]*)\"`", re.M)


def go_types() -> str:
    with tarfile.open(reference_root() / "source" / OPERATOR_TARBALL) as archive:
        member = next(m for m in archive.getmembers() if m.name.endswith(TYPES))
        handle = archive.extractfile(member)
        assert handle is not None
        return handle.read().decode()


def go_paths(structs: dict[str, str], name: str, prefix: str = "") -> set[str]:
    """The dotted JSON paths of struct ``name``; an inline field adds its struct's fields."""
    paths: set[str] = set()
    for go_type, tag in FIELD.findall(structs[name]):
        json_name = tag.split(",")[0]
        inner = go_type.lstrip("*").split(".")[-1]
        if ",inline" in tag:
            inlined = EXTERNAL.get(inner) or go_paths(structs, inner)
            paths |= {f"{prefix}{p}" for p in inlined}
            continue
        path = f"{prefix}{json_name}"
        paths.add(path)
        if inner in structs:
            paths |= go_paths(structs, inner, f"{path}.")
    return paths


def model_paths(model: type[BaseModel], prefix: str = "") -> set[str]:
    paths: set[str] = set()
    for name, info in model.model_fields.items():
        path = f"{prefix}{info.alias or name}"
        paths.add(path)
        for arg in (info.annotation, *typing.get_args(info.annotation)):
            if isinstance(arg, type) and issubclass(arg, BaseModel):
                paths |= model_paths(arg, f"{path}.")
    return paths


def test_the_model_declares_exactly_upstreams_fields() -> None:
    structs = {name: body for name, body in STRUCT.findall(go_types())}
    upstream = go_paths(structs, "OperatorConfiguration")
    ours = model_paths(OperatorConfiguration)
    assert len(upstream) > 80, "types.go no longer parses as expected"
    assert sorted(upstream - ours) == []
    assert sorted(ours - upstream) == []

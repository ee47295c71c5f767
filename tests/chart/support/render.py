"""Rendering the chart with the pinned helm, and reading RBAC rules (no tests here)."""

from __future__ import annotations

import atexit
import copy
import functools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import yaml

from syncagent.devcluster import versions
from syncagent.devcluster.build import ensure_helm

REPO = Path(__file__).resolve().parents[3]
CHART = REPO / "helm" / "syncagent"
RELEASE = "r1"
RELEASE_NS = "syncagent-system"
# Helm's own default is v1.20.0 for a binary built without its Makefile's ldflags.
KUBE_VERSION = versions.KUBERNETES
# The rendered CRDs are large; libyaml parses them in a fraction of the pure-Python time.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.cache
def helm_env() -> dict[str, str]:
    """Helm's config, cache and data in a private folder: the machine's helm setup never leaks in."""
    home = Path(tempfile.mkdtemp(prefix="syncagent-helm-"))
    atexit.register(shutil.rmtree, home, ignore_errors=True)
    return {
        **os.environ,
        "HELM_CACHE_HOME": str(home / "cache"),
        "HELM_CONFIG_HOME": str(home / "config"),
        "HELM_DATA_HOME": str(home / "data"),
    }


def run_helm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ensure_helm(log=False)), *args],
        capture_output=True,
        text=True,
        env=helm_env(),
        timeout=120,
        check=False,
    )


def _values_file(values: dict[str, Any]) -> str:
    handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 - helm reads it after we close it
        "w", suffix=".yaml", prefix="values-", delete=False
    )
    with handle:
        yaml.safe_dump(values, handle)
    return handle.name


def helm_with_values(
    command: str, values: dict[str, Any], *args: str
) -> subprocess.CompletedProcess[str]:
    path = _values_file(values)
    # `install` has no --kube-version; lint and template render for the version we test against.
    version = () if command == "install" else ("--kube-version", KUBE_VERSION)
    try:
        return run_helm(command, *args, *version, "-f", path)
    finally:
        os.unlink(path)


@functools.cache
def _template(values_json: bytes, release: str, namespace: str) -> str:
    result = helm_with_values(
        "template", orjson.loads(values_json), release, str(CHART), "--namespace", namespace
    )
    assert result.returncode == 0, f"helm template failed:\n{result.stderr}"
    return result.stdout


def render(
    values: dict[str, Any] | None = None, *, release: str = RELEASE, namespace: str = RELEASE_NS
) -> list[dict[str, Any]]:
    """The chart's objects for these values; fails on any helm error."""
    key = orjson.dumps(values or {}, option=orjson.OPT_SORT_KEYS)
    return copy.deepcopy(_parsed(key, release, namespace))


@functools.cache
def _parsed(values_json: bytes, release: str, namespace: str) -> list[dict[str, Any]]:
    text = _template(values_json, release, namespace)
    return [doc for doc in yaml.load_all(text, Loader=_LOADER) if doc]


def render_error(values: dict[str, Any]) -> str:
    """helm template's error output for values the chart must reject."""
    result = helm_with_values("template", values, RELEASE, str(CHART), "--namespace", RELEASE_NS)
    assert result.returncode != 0, f"helm template accepted {values}:\n{result.stdout[:2000]}"
    return result.stderr


def objects(docs: Iterable[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind]


def one(docs: Iterable[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    found = [d for d in objects(docs, kind) if name is None or d["metadata"]["name"] == name]
    assert len(found) == 1, f"expected one {kind} {name or ''}, found {len(found)}"
    return found[0]


def container(docs: Iterable[dict[str, Any]]) -> dict[str, Any]:
    pod = one(docs, "Deployment")["spec"]["template"]["spec"]
    assert [c["name"] for c in pod["containers"]] == ["agent"]
    return dict(pod["containers"][0])


@dataclass(frozen=True)
class Rules:
    """The rules of one Role or ClusterRole, evaluated as the RBAC authorizer does."""

    rules: tuple[dict[str, Any], ...]

    @classmethod
    def of(cls, role: dict[str, Any]) -> Rules:
        return cls(tuple(role.get("rules") or ()))

    def allows(self, group: str, resource: str, verb: str, *, name: str = "") -> bool:
        return any(_matches(rule, group, resource, verb, name) for rule in self.rules)


def _matches(rule: dict[str, Any], group: str, resource: str, verb: str, name: str) -> bool:
    def has(key: str, value: str) -> bool:
        items = rule.get(key) or []
        return value in items or "*" in items

    names = rule.get("resourceNames") or []
    return (
        has("apiGroups", group)
        and has("resources", resource)
        and has("verbs", verb)
        and (not names or name in names)
    )


def cluster_wide_rules(docs: list[dict[str, Any]], *, subject: str) -> Rules:
    """Every rule bound to ServiceAccount ``subject`` through a ClusterRoleBinding."""
    roles = {r["metadata"]["name"]: r for r in objects(docs, "ClusterRole")}
    rules: list[dict[str, Any]] = []
    for binding in objects(docs, "ClusterRoleBinding"):
        if any(s["kind"] == "ServiceAccount" and s["name"] == subject for s in binding["subjects"]):
            rules.extend(roles[binding["roleRef"]["name"]]["rules"])
    return Rules(tuple(rules))


def namespace_rules(docs: list[dict[str, Any]], namespace: str, *, subject: str) -> Rules:
    """Rules bound to ``subject`` by RoleBindings in ``namespace`` (not the cluster-wide ones)."""
    roles = {("ClusterRole", r["metadata"]["name"]): r for r in objects(docs, "ClusterRole")}
    for role in objects(docs, "Role"):
        if role["metadata"]["namespace"] == namespace:
            roles["Role", role["metadata"]["name"]] = role
    rules: list[dict[str, Any]] = []
    for binding in objects(docs, "RoleBinding"):
        if binding["metadata"]["namespace"] != namespace:
            continue
        if any(s["kind"] == "ServiceAccount" and s["name"] == subject for s in binding["subjects"]):
            ref = binding["roleRef"]
            rules.extend(roles[ref["kind"], ref["name"]]["rules"])
    return Rules(tuple(rules))

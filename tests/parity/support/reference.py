"""What the parity tier shares: where upstream's data is, its cases, and ``syncagent render``.

The data stays in ``$SYNCAGENT_REFERENCE`` (default ``../shared/reference`` next to the repo);
nothing of it is copied into the project. Missing data fails the tier, never skips it.
"""

from __future__ import annotations

import functools
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from syncagent.ssa.api import KubeApi
from syncagent.ssa.desired import ref_of
from tests.support.upstream_source import DEFAULT_REFERENCE, reference_root

REPO = Path(__file__).resolve().parents[3]
OUR_KINDS = ("DynamoGraphDeployment", "DynamoComponentDeployment")
INPUT_MANAGER = "parity-input"
WORKER_TYPES = ("worker", "prefill", "decode")
ALPHA = "nvidia.com/v1alpha1"


def missing_reference() -> str | None:
    """Why the reference data cannot be used, or ``None`` when it can."""
    root = reference_root()
    needed = [root / "golden", root / "dgd-examples", root / "upstream" / "dgdr-golden"]
    absent = [str(p) for p in needed if not p.is_dir()]
    if absent:
        return (
            f"upstream reference data not found ({', '.join(absent)}); set SYNCAGENT_REFERENCE "
            f"to the shared/reference folder (default {DEFAULT_REFERENCE})"
        )
    return None


def require_reference() -> Path:
    problem = missing_reference()
    if problem:
        pytest.fail(problem, pytrace=False)
    return reference_root()


MISSING = "reference-missing"


def params_or_missing(values: Sequence[Any], ids: Sequence[str]) -> list[Any]:
    """Parametrize over ``values``; without reference data, one case that fails."""
    if missing_reference() or not values:
        return [pytest.param(MISSING, id=MISSING)]
    return [pytest.param(v, id=i) for v, i in zip(values, ids, strict=True)]


# -- golden contract cases --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GoldenCase:
    """One upstream golden scenario: the manifests a user applies and the contract."""

    id: str  # golden/<group>/<name> or dgdr/<name>
    inputs: Path
    output: Path


def golden_cases() -> list[GoldenCase]:
    root = reference_root()
    cases = [
        GoldenCase(f"golden/{d.parent.name}/{d.name}", d / "input.yaml", d / "output.yaml")
        for d in sorted((root / "golden").glob("*/*"))
        if (d / "input.yaml").is_file() and (d / "output.yaml").is_file()
    ]
    dgdr = root / "upstream" / "dgdr-golden"
    for output in sorted(dgdr.glob("dgdr-*-output.yaml")):
        name = output.name.removeprefix("dgdr-").removesuffix("-output.yaml")
        # The DGDR controller's graph (README: the graph inside output.yaml) is the input.
        cases.append(GoldenCase(f"dgdr/{name}", dgdr / f"dgd-{name}.yaml", output))
    return cases


# -- reference graphs -------------------------------------------------------------------------


def graph_files() -> list[Path]:
    """Every file of ``dgd-examples/`` and ``upstream/`` holding a graph (not a contract)."""
    root = reference_root()
    files = sorted((root / "dgd-examples").glob("*.yaml")) + sorted(
        p for p in (root / "upstream").rglob("*.yaml") if not p.name.startswith("dgdr-")
    )
    return [p for p in files if any(d.get("kind") == OUR_KINDS[0] for d in documents(p))]


def documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]


def relative_id(path: Path) -> str:
    return str(path.relative_to(reference_root()))


# -- the CLI, run as a user runs it -----------------------------------------------------------


async def dry_run(api: KubeApi, obj: dict[str, Any], manager: str) -> dict[str, Any]:
    """A server-side dry-run apply (forced, as the agent's content applies are): the object as
    the server would store it, defaults included."""
    return await api.apply(ref_of(obj), obj, manager=manager, force=True, dry_run=True)


async def dry_run_all(api: KubeApi, inputs: Sequence[dict[str, Any]], *args: str) -> list[dict]:
    """The inputs and everything ``syncagent render`` makes of them, as the server stores them."""
    out = [await dry_run(api, doc, INPUT_MANAGER) for doc in inputs]
    for item in render_json(dump(inputs), *args):
        out.append(await dry_run(api, item["object"], item["manager"]))
    return out


def syncagent(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "syncagent.cli.main", *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
        timeout=120,
    )


def render_json(text: str, *args: str) -> list[dict[str, Any]]:
    """``syncagent render -f - -o json`` of ``text``: ``[{manager, object}, ...]``."""
    proc = syncagent("render", "-f", "-", "-o", "json", *args, stdin=text)
    assert proc.returncode == 0, (
        f"syncagent render {' '.join(args)} exited {proc.returncode}: {proc.stderr}"
    )
    return orjson.loads(proc.stdout)


def in_namespace(docs: Sequence[dict[str, Any]], namespace: str) -> list[dict[str, Any]]:
    """``docs`` with our kinds moved into ``namespace``, as upstream's golden harness applies
    inputs into its per-test namespace; other documents are left out (render skips them)."""
    docs = [d for d in docs if d.get("kind") in OUR_KINDS]
    for doc in docs:
        if doc.get("kind") in OUR_KINDS:
            doc.setdefault("metadata", {})["namespace"] = namespace
    return docs


def dump(docs: Sequence[dict[str, Any]]) -> str:
    return yaml.safe_dump_all(list(docs), sort_keys=False)


@functools.cache
def graph_text(path: Path) -> str:
    """The file as v1beta1: v1alpha1 graphs go through ``syncagent convert``."""
    text = path.read_text()
    if not any(d.get("apiVersion") == ALPHA for d in yaml.safe_load_all(text) if d):
        return text
    proc = syncagent("convert", "-f", str(path))
    assert proc.returncode == 0, (
        f"syncagent convert -f {path} exited {proc.returncode}: {proc.stderr}"
    )
    return proc.stdout


def node_count(component: Mapping[str, Any]) -> int:
    """The CRD's answer: ``multinode`` absent is one node, ``nodeCount`` defaults to 2."""
    multinode = component.get("multinode")
    return 1 if multinode is None else int(multinode.get("nodeCount", 2))


def ds_eligible(components: list[Mapping[str, Any]]) -> bool:
    """spec/disaggregatedset.md §1 with every capability on."""
    candidates = [c for c in components if node_count(c) > 1 and c.get("type") in WORKER_TYPES]
    replicas = {int(c.get("replicas", 1)) == 0 for c in candidates}
    return (
        2 <= len(candidates) <= 10
        and not any("scalingAdapter" in c for c in candidates)
        and len(replicas) == 1
    )

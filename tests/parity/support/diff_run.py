"""Run graphs through both sides of the differential tier and compare them.

Upstream's side is one harness process for a whole batch; ours is one ``syncagent render -o json
--program P`` per batch and pathway (a subprocess, as a user runs it). Every graph of a batch
gets a namespace of its own, so namespace-wide objects (the model Service) never mix graphs.

Both sides' objects are then passed through a server-side dry run on the test control plane, as
each side writes (upstream creates, the agent applies), as the golden tier does: the server adds its defaults (a Service's ``type: ClusterIP``,
a container's ``terminationMessagePath``, the CRDs' ``default:`` values) to whichever side left
them out, so no list of server defaults is kept by hand, and an object the server would refuse
shows up. Kinds without defaults are compared as written, DynamoComponentDeployments too: the
control plane serves our CRD, an adapted copy of upstream's, whose pruning would hide
upstream's fields.
"""

from __future__ import annotations

import copy
import dataclasses
import re
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import orjson
import yaml

from syncagent.ssa.api import KubeApi
from syncagent.ssa.desired import ref_of
from syncagent.ssa.errors import SsaError
from tests.parity.support.diff_configs import DEFAULT, operator_config
from tests.parity.support.differential import (
    SERVER_METADATA,
    Divergence,
    Pathway,
    compare,
    ours_for_comparison,
    pods_never_created,
    prune,
    refused_stub,
    upstream_for_comparison,
)
from tests.parity.support.reference import dry_run, dump, syncagent
from tests.parity.support.upstream_harness import HarnessCase, run_harness
from tests.support.parity_differences import Difference

# The kinds whose stored form differs from what was sent: native kinds with server defaults in
# their spec, and custom resources whose CRDs declare defaults. Others (ConfigMap, ServiceAccount,
# Role, RoleBinding, our DCDs) are compared as written, which saves thousands of dry runs.
STORED_KINDS = frozenset(
    {"Deployment", "Service", "LeaderWorkerSet", "PodCliqueSet", "DisaggregatedSet"}
)
UPSTREAM_MANAGER = "parity-upstream"
# Dry runs in flight at once: the control plane shares two cores with everything else.
CONCURRENCY = 8
DRY_RUN_SECONDS = 60
ATTEMPTS = 3
# Cases compared at once (each a task): bounded, so a batch of hundreds never holds hundreds of
# requests' worth of state in flight.
CASES_AT_ONCE = 40


TAKEOVER = "takeover"
# What upstream's operator records on a graph it serves: the active worker generation, which
# its worker components' names carry (docs/parity.md D1).
WORKER_HASH_ANNOTATIONS = ("nvidia.com/current-worker-hash", "nvidia.com/current-worker-hash-v2")
# What upstream's operator leaves on a graph it served and syncagent reads: its worker
# generation, and the origin-version stamp its admission defaulting wrote (the vLLM multinode
# executor of an unstamped graph that upstream served differs, docs/multinode.md).
TAKEN_ANNOTATIONS = (*WORKER_HASH_ANNOTATIONS, "nvidia.com/dynamo-operator-origin-version")


@dataclass(frozen=True, slots=True)
class DiffCase:
    """One graph on one pathway. ``id`` is ``diff/<group>/<source>``: the case id the
    ``yaml parity`` blocks of docs/parity.md select on. ``group`` is the pathway, or
    ``takeover`` for a graph taken over from upstream's operator on the Component pathway: its
    graph carries the worker-hash annotations upstream wrote on its own copy
    (:func:`taken_over`), so syncagent renders the names upstream's objects have."""

    id: str
    pathway: Pathway
    docs: Sequence[Mapping[str, Any]]  # the graph and the side objects it needs
    namespace: str
    discovery_backend: str = ""
    takeover: bool = False
    config: str = DEFAULT  # the operator configuration (diff_configs.CONFIGS), both sides

    @property
    def group(self) -> str:
        return TAKEOVER if self.takeover else self.pathway.value

    def graph_yaml(self) -> str:
        return dump([dict(d) for d in self.docs])


def taken_over(case: DiffCase, upstream_objects: Sequence[Mapping[str, Any]]) -> DiffCase:
    """``case`` with its graph annotated as upstream's final copy of it is: the worker-hash
    annotations its operator wrote and its origin-version stamp (an upstream run that failed
    leaves the graph as given)."""
    if not case.takeover:
        return case
    docs = [copy.deepcopy(dict(d)) for d in case.docs]
    graph = next(d for d in docs if d.get("kind") == "DynamoGraphDeployment")
    name = graph["metadata"]["name"]
    theirs = next(
        (
            o
            for o in upstream_objects
            if o.get("kind") == "DynamoGraphDeployment" and o["metadata"].get("name") == name
        ),
        {},
    )
    recorded = (theirs.get("metadata") or {}).get("annotations") or {}
    copied = {k: recorded[k] for k in TAKEN_ANNOTATIONS if k in recorded}
    if copied:
        graph["metadata"].setdefault("annotations", {}).update(copied)
    return dataclasses.replace(case, docs=docs)


def worker_hash_of(case: DiffCase) -> bool:
    """Whether the case's graph carries a worker-hash annotation."""
    graph = next(d for d in case.docs if d.get("kind") == "DynamoGraphDeployment")
    annotations = graph.get("metadata", {}).get("annotations") or {}
    return any(k in annotations for k in WORKER_HASH_ANNOTATIONS)


@dataclass(slots=True)
class CaseResult:
    case: DiffCase
    divergences: list[Divergence] = field(default_factory=list)
    edits: dict[str, int] = field(default_factory=dict)
    error: str | None = None  # one side could not render the graph at all
    # Upstream's objects the API server refuses: upstream cannot run them, so nothing of ours
    # is compared with them (and syncagent refusing such a graph outright agrees with it).
    upstream_refused: list[str] = field(default_factory=list)

    def report(self) -> str:
        head = f"{self.case.id} (namespace {self.case.namespace})"
        body = [f"  error: {self.error}"] if self.error else [f"  {d}" for d in self.divergences]
        return "\n".join([head, *body])


class ServerStore:
    """Objects as the API server would store them: a forced server-side dry-run apply in
    ``namespace`` (which must exist), the object's own namespace put back. A refused object
    becomes its error text. Identical requests are asked once."""

    def __init__(self, api: KubeApi, namespace: str) -> None:
        self.api = api
        self.namespace = namespace
        self.limiter = anyio.CapacityLimiter(CONCURRENCY)
        self.cache: dict[bytes, dict[str, Any] | str] = {}

    async def stored(
        self, obj: Mapping[str, Any], manager: str, *, create: bool = False
    ) -> dict[str, Any] | str:
        """``create``: a dry-run create, as upstream's operator writes (it does not use
        server-side apply, whose list-key rules its objects need not meet); otherwise a forced
        apply, as the agent writes."""
        if obj.get("kind") not in STORED_KINDS:
            return dict(obj)
        body = prune(copy.deepcopy(dict(obj)))
        original = body.setdefault("metadata", {}).get("namespace")
        # What the server assigned upstream's objects (the fake client's) is no part of a request.
        for key in SERVER_METADATA:
            body["metadata"].pop(key, None)
        body.pop("status", None)
        body["metadata"]["namespace"] = self.namespace
        key = orjson.dumps([create, manager, body], option=orjson.OPT_SORT_KEYS)
        if key not in self.cache:
            async with self.limiter:
                self.cache[key] = await self._answer(body, manager, create=create)
        result = self.cache[key]
        if isinstance(result, str):
            return result
        result = copy.deepcopy(result)
        result["metadata"]["namespace"] = original
        return result

    async def _answer(
        self, body: dict[str, Any], manager: str, *, create: bool
    ) -> dict[str, Any] | str:
        for attempt in range(ATTEMPTS):
            try:
                with anyio.fail_after(DRY_RUN_SECONDS):
                    return await self._dry_run(body, manager, create=create)
            except SsaError as error:  # the server's refusal is the finding
                return f"the API server refuses it: {error}"
            except (TimeoutError, httpx2.TimeoutException):
                # A control plane sharing two busy cores answers late: asked again, then
                # named as such, never a hang of the whole tier or a lost run.
                if attempt == ATTEMPTS - 1:
                    return f"the API server did not answer in {ATTEMPTS} tries"
        raise AssertionError("unreachable")

    async def _dry_run(self, body: dict[str, Any], manager: str, *, create: bool) -> dict[str, Any]:
        if create:
            return await self.api.create(ref_of(body), body, manager=manager, dry_run=True)
        return await dry_run(self.api, body, manager)


def in_namespace(case: DiffCase) -> list[dict[str, Any]]:
    docs = [copy.deepcopy(dict(d)) for d in case.docs]
    for doc in docs:
        doc.setdefault("metadata", {})["namespace"] = case.namespace
    return docs


async def run_cases(
    binary: Path,
    cases: Sequence[DiffCase],
    differences: Sequence[Difference],
    store: ServerStore,
) -> list[CaseResult]:
    """Every case through upstream and syncagent, stored by the server, compared."""
    started = time.monotonic()
    # A DS case and a Component case of one graph share upstream's (Component) run.
    wanted = {_harness_id(c): _harness_case(c) for c in cases}
    upstream = run_harness(binary, list(wanted.values()))
    # A takeover case renders the graph as upstream's operator left it annotated.
    cases = [taken_over(c, upstream[_harness_id(c)].objects) for c in cases]
    harnessed = time.monotonic()
    ours = _render_all(cases)
    rendered = time.monotonic()
    results: list[CaseResult] = []

    async def one(case: DiffCase) -> None:
        results.append(
            await _compare_case(case, upstream[_harness_id(case)], ours, differences, store)
        )

    for start in range(0, len(cases), CASES_AT_ONCE):
        async with anyio.create_task_group() as group:
            for case in cases[start : start + CASES_AT_ONCE]:
                group.start_soon(one, case)
    print(
        f"differential: {len(cases)} cases ({len(wanted)} upstream runs): upstream harness "
        f"{harnessed - started:.1f}s, syncagent render {rendered - harnessed:.1f}s, "
        f"{len(store.cache)} dry runs and the comparison {time.monotonic() - rendered:.1f}s; "
        f"{sum(bool(r.upstream_refused) for r in results)} graphs upstream's operator could not "
        f"run (the API server refuses part of its rendering or would refuse its pods), "
        f"{sum(bool(r.upstream_refused) and r.error is None and not r.divergences for r in results)}"
        " of them refused or rendered alike by syncagent; "
        f"{sum(c.takeover and worker_hash_of(c) for c in cases)} takeover cases with upstream's "
        "worker hash"
    )
    order = {id(c): i for i, c in enumerate(cases)}
    return sorted(results, key=lambda r: order[id(r.case)])


async def _compare_case(
    case: DiffCase,
    theirs: Any,
    ours: Mapping[RenderKey, list[dict[str, Any]] | str],
    differences: Sequence[Difference],
    store: ServerStore,
) -> CaseResult:
    mine = ours[_render_key(case)]
    if theirs.error:
        return CaseResult(case, error=_error(theirs.error, mine))
    refused: list[Divergence] = []
    stored = [
        await _stored(store, o, UPSTREAM_MANAGER, refused, side="upstream")
        for o in _rendered(theirs.objects, case)
    ]
    cannot_run = [f"{d.kind}/{d.name}: {d.upstream}" for d in refused]
    cannot_run += [
        f"{o.get('kind')}/{o.get('metadata', {}).get('name')}: {label}"
        for o in _rendered(theirs.objects, case)
        for label in pods_never_created(o)
    ]
    if isinstance(mine, str):
        error = None if cannot_run else _error(None, mine)
        return CaseResult(case, error=error, upstream_refused=cannot_run)
    refused.clear()
    upstream_objects = upstream_for_comparison(stored, pathway=case.pathway)
    our_items = [
        {
            **item,
            "object": await _stored(store, item["object"], item["manager"], refused, side="ours"),
        }
        for item in mine
    ]
    listed = [d for d in differences if d.applies_to(case.id)]
    comparison = compare(
        upstream_objects, ours_for_comparison(our_items, pathway=case.pathway), listed
    )
    return CaseResult(case, refused + comparison.divergences, comparison.edits, None, cannot_run)


def _rendered(objects: Sequence[Mapping[str, Any]], case: DiffCase) -> list[Mapping[str, Any]]:
    """Upstream's objects without what it was given (the graph, a ConfigMap it mounts...)."""
    given = {(d.get("kind"), d.get("metadata", {}).get("name")) for d in case.docs}
    return [o for o in objects if (o.get("kind"), o.get("metadata", {}).get("name")) not in given]


async def _stored(
    store: ServerStore,
    obj: Mapping[str, Any],
    manager: str,
    refused: list[Divergence],
    *,
    side: str,
) -> dict[str, Any]:
    result = await store.stored(obj, manager, create=side == "upstream")
    if isinstance(result, str):
        kind, name = str(obj.get("kind")), str(obj.get("metadata", {}).get("name"))
        values = (result, "<stored>") if side == "upstream" else ("<stored>", result)
        refused.append(Divergence(kind, name, "(server dry run)", *values))
        # Its fields are not compared: the other side's would carry server defaults this one
        # cannot get, and the refusal is the finding.
        return refused_stub(obj)
    return result


def _error(upstream: str | None, ours: Any) -> str:
    parts = []
    if upstream:
        parts.append(f"upstream: {upstream}")
    if isinstance(ours, str):
        parts.append(f"syncagent: {ours}")
    return "; ".join(parts)


def _harness_id(case: DiffCase) -> str:
    grove = "grove" if case.pathway.upstream_grove else "component"
    return f"{case.namespace}/{grove}/{case.discovery_backend}/{case.config}"


def _harness_case(case: DiffCase) -> HarnessCase:
    return HarnessCase(
        id=_harness_id(case),
        namespace=case.namespace,
        objects=in_namespace(case),
        grove=case.pathway.upstream_grove,
        discovery_backend=case.discovery_backend,
        operator_config=operator_config(case.config),
    )


# A takeover case and the Component case of one graph share pathway and namespace, not the graph.
RenderKey = tuple[str, str, str, str]


def _render_key(case: DiffCase) -> RenderKey:
    return case.group, case.discovery_backend, case.namespace, case.config


def _render_all(cases: Sequence[DiffCase]) -> dict[RenderKey, list[dict[str, Any]] | str]:
    """Our objects per case: one render per pathway and discovery backend for the whole batch.
    One graph syncagent refuses fails its whole render; its error names the graph, which takes
    that error as its finding while the rest are rendered again (one render per refused graph,
    not one per graph)."""
    out: dict[RenderKey, list[dict[str, Any]] | str] = {}
    groups: dict[tuple[str, Pathway, str, str], list[DiffCase]] = {}
    for case in cases:
        key = (case.group, case.pathway, case.discovery_backend, case.config)
        groups.setdefault(key, []).append(case)
    for (_, pathway, backend, _config), group in groups.items():
        _render_halving(group, pathway, backend, out)
    return out


def _render_halving(
    cases: Sequence[DiffCase],
    pathway: Pathway,
    backend: str,
    out: dict[RenderKey, list[dict[str, Any]] | str],
) -> None:
    pending = list(cases)
    while pending:
        batch = _render(pending, pathway, backend)
        if not isinstance(batch, str):
            for case in pending:
                out[_render_key(case)] = batch.get(case.namespace, [])
            return
        refused = _refused_case(batch, pending)
        if refused is None:  # the error names no graph of the batch: halve it
            if len(pending) == 1:
                out[_render_key(pending[0])] = batch
                return
            middle = len(pending) // 2
            _render_halving(pending[:middle], pathway, backend, out)
            _render_halving(pending[middle:], pathway, backend, out)
            return
        # syncagent stops at the first graph it refuses and names it: that graph's finding.
        out[_render_key(refused)] = batch
        pending.remove(refused)


_NAMED_GRAPH = re.compile(r"DynamoGraphDeployment/([^/\s]+)/")


def _refused_case(error: str, cases: Sequence[DiffCase]) -> DiffCase | None:
    named = _NAMED_GRAPH.search(error)
    by_namespace = {c.namespace: c for c in cases}
    return by_namespace.get(named[1]) if named else None


def _render(
    cases: Sequence[DiffCase], pathway: Pathway, backend: str
) -> dict[str, list[dict[str, Any]]] | str:
    text = "".join(yaml.safe_dump_all(in_namespace(c), sort_keys=False) + "---\n" for c in cases)
    args = ["render", "-f", "-", "-o", "json", "--program", pathway.value]
    if backend:
        args += ["--discovery-backend", backend]
    config = operator_config(cases[0].config)  # a batch shares its configuration
    with tempfile.TemporaryDirectory(prefix="syncagent-diff-") as folder:
        if config is not None:
            path = Path(folder) / "operator-config.yaml"
            path.write_text(yaml.safe_dump(config))
            args += ["--operator-config", str(path)]
        proc = syncagent(*args, stdin=text)
    if proc.returncode != 0:
        return f"syncagent render exited {proc.returncode}: {proc.stderr.strip()}"
    by_namespace: dict[str, list[dict[str, Any]]] = {}
    for item in orjson.loads(proc.stdout):
        namespace = item["object"].get("metadata", {}).get("namespace", "")
        by_namespace.setdefault(namespace, []).append(item)
    return by_namespace

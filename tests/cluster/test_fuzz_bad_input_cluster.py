"""Bad input against a real kube-apiserver (issue 15, items 2 and 3).

1. The offline structural check and the API server agree: for every generated invalid graph
   (``tests/support/badgraphs.py``), a server-side dry-run create is rejected exactly when the
   offline check finds a structural error, and each offline message carries the server's own
   cause message for that field; the unknown fields the server warns about are the ones we
   warn about. Graphs the server accepts but our rules refuse (a ``main`` container without an
   image, nesting too deep to render) must still be refused offline.
2. The agent under a batch of invalid graphs beside valid ones: it stays up, deletes nothing,
   keeps serving the valid graphs, and gives each invalid graph the server accepted a condition
   naming the field.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from syncagent.api.schemas import check_schema, unknown_field_warnings
from syncagent.programs import status
from tests.support import figures
from tests.support.agent import running_agent
from tests.support.badgraphs import BadGraph, bad_graphs, examples
from tests.support.cli import run_cli
from tests.support.fake_workloads import simulate_ready
from tests.support.kube import DGD, PATHS, Kube, condition
from tests.support.polling import eventually

TABLE = "bad-input fuzz (cluster tier, real kube-apiserver)"
AGENT_TABLE = "bad-input fuzz (cluster tier, running agent)"
DEADLINE = 90.0
BATCH = 80
ON_SERVER = settings(
    max_examples=150,
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,  # one namespace for all: the creates are dry runs
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)


def server_words(message: str) -> str:
    """Our message without the reader's hint we append to type errors."""
    return message.split(" (got ", 1)[0]


def dry_run_create(kube: Kube, ns: str, doc: dict[str, Any]) -> tuple[int, Any, list[str]]:
    return _post(kube, ns, doc, dryRun="All", fieldValidation="Warn")


def _create(kube: Kube, ns: str, doc: dict[str, Any]) -> None:
    code, body, _ = _post(kube, ns, doc)
    assert code == 201, body


def _post(kube: Kube, ns: str, doc: dict[str, Any], **params: str) -> tuple[int, Any, list[str]]:
    body = {**doc, "metadata": {**doc.get("metadata", {}), "namespace": ns}}
    resp = kube.http.post(
        PATHS[DGD].format(ns=ns),
        params=params,
        content=json.dumps(body),  # orjson refuses the deep-nesting graphs
        headers={"Content-Type": "application/json"},
    )
    warnings = [_warning_text(w) for w in _warnings(resp)]
    return resp.status_code, resp.json(), warnings


def _warning_text(header: str) -> str:
    """``299 - "unknown field \\"x\\""`` -> ``unknown field "x"`` (RFC 7234 warn-text)."""
    quoted = header.split(" - ", 1)[-1]
    return quoted[1:-1].replace('\\"', '"')


def _warnings(resp: Any) -> list[str]:
    return list(resp.headers.get_list("warning"))


def _causes(body: Any) -> list[tuple[str, str]]:
    return [(c.get("field", ""), c.get("message", "")) for c in body["details"]["causes"]]


def _too_deep(finding: Any) -> bool:
    # Our own rule (the renderers and JSON encoders recurse); the server prunes or keeps it.
    return "levels deep" in finding.message


@ON_SERVER
@given(bad=bad_graphs())
def test_offline_check_and_api_server_agree_on_every_generated_graph(
    kube: Kube, namespace: str, bad: BadGraph
):
    code, body, warned = dry_run_create(kube, namespace, bad.doc)
    ours = check_schema(bad.doc)
    structural = [f for f in ours.errors if not _too_deep(f)]
    offline, _, err = run_cli(["render", "-f", "-"], json.dumps(bad.doc))
    if code >= 400:
        assert code in (400, 422), body
        causes = _causes(body) if code == 422 else []
        for finding in structural:
            words = server_words(finding.message)
            assert any(
                msg == words and field in (finding.path, "<nil>") for field, msg in causes
            ), (finding, causes)
        assert offline == 1, err  # whatever the server refuses, we refuse offline too
        how = "same words" if structural else "by syncagent's rules"
        figures.count(TABLE, f"server rejected, offline rejected ({how})")
        return
    assert code == 201, body
    assert structural == [], f"offline rejected what the server accepts: {structural}"
    if ours.errors:
        assert offline == 1, err
        assert bad.path in err
        figures.count(TABLE, "server accepted (pruned or kept), offline rejected: nested too deep")
        return
    pruned = {f'unknown field "{u.path}"' for u in ours.unknown if u.pruned}
    assert pruned == {w for w in warned if w.startswith("unknown field")}, (pruned, warned)
    assert bad.path in err
    if bad.expect == "warn":
        assert offline == 0, err
        figures.count(TABLE, "server accepted, offline warned (unknown field)")
    else:
        assert offline == 1, err
        figures.count(TABLE, "server accepted, offline rejected by syncagent's rules")


ISSUE_SHAPES = {
    "replicas true": ("spec.components[1].replicas", True),
    "replicas 10^12": ("spec.components[1].replicas", 10**12),
    "replicas string": ("spec.components[1].replicas", "3"),
    "containerPort 2^31": (
        "spec.components[1].podTemplate.spec.containers[0].ports",
        [{"containerPort": 2**31}],
    ),
}


@pytest.mark.parametrize("shape", sorted(ISSUE_SHAPES))
def test_issue_shapes_get_the_api_server_words_offline(kube: Kube, namespace: str, shape: str):
    path, value = ISSUE_SHAPES[shape]
    doc = copy.deepcopy(next(d for d in examples() if d["metadata"]["name"] == "qwen-agg"))
    target = doc["spec"]["components"][1]
    if path.endswith("replicas"):
        target["replicas"] = value
    else:
        target["podTemplate"]["spec"]["containers"][0]["ports"] = value
    code, body, _ = dry_run_create(kube, namespace, doc)
    assert code == 422, body
    server = {msg for _, msg in _causes(body)}
    offline, out, err = run_cli(["render", "-f", "-"], json.dumps(doc))
    assert (offline, out) == (1, "")
    (ours,) = check_schema(doc).errors
    assert server_words(ours.message) in server
    assert server_words(ours.message) in err


def test_replicaz_typo_is_warned_offline_and_kept_by_the_server(kube: Kube, namespace: str):
    doc = copy.deepcopy(next(d for d in examples() if d["metadata"]["name"] == "qwen-agg"))
    doc["spec"]["components"][1]["replicaz"] = 3
    code, body, _ = dry_run_create(kube, namespace, doc)
    assert code == 201, body
    assert body["spec"]["components"][1]["replicaz"] == 3  # preserved: nothing else warns
    (line,) = unknown_field_warnings(doc)
    assert 'unknown field "spec.components[1].replicaz"' in line
    assert 'did you mean "replicas"?' in line


# -- the running agent -----------------------------------------------------------------------


def _named(bad: BadGraph, i: int) -> dict[str, Any]:
    doc = copy.deepcopy(bad.doc)
    if bad.path != "metadata.name":
        doc["metadata"]["name"] = f"bad-{i}"
    return doc


def _expected(kube: Kube, ns: str, name: str) -> tuple[str, str]:
    """What the agent must report for the graph as the server stored it (pruning included):
    ``("reject", <field>)``, ``("warn", <field>)`` or ``("serve", "")``."""
    stored = kube.get(DGD, ns, name)
    assert stored is not None
    code, _, err = run_cli(["render", "-f", "-"], json.dumps(stored))
    lines = err.splitlines()
    if code == 1:
        return "reject", lines[0].split(": ", 3)[2]
    warned = [ln for ln in lines if ln.startswith("warning: ")]
    return ("warn", warned[0].split(": ", 3)[2]) if warned else ("serve", "")


def _reports(obj: dict[str, Any] | None, expect: str, field: str) -> bool:
    if expect == "reject":
        ready = condition(obj, status.READY)
        return ready.get("reason") == status.VALIDATION_FAILED and field in str(
            ready.get("message")
        )
    unknown = condition(obj, status.UNKNOWN_FIELDS)
    return f'unknown field "{field}"' in str(unknown.get("message"))


def generated_batch(size: int) -> list[BadGraph]:
    """``size`` graphs from the generator (hypothesis's draws, not its minimal first example)."""
    batch: list[BadGraph] = []

    @settings(max_examples=size, deadline=None, database=None, phases=[Phase.generate])
    @given(bad=bad_graphs())
    def collect(bad: BadGraph) -> None:
        batch.append(bad)

    collect()
    return batch


def test_agent_survives_invalid_graphs_beside_valid_ones(
    control_plane: Any, kube: Kube, namespace: str
):
    batch = generated_batch(BATCH)
    valid = [copy.deepcopy(d) for d in examples()[:2]]
    for doc in valid:
        kube.create({**doc, "metadata": {**doc["metadata"], "namespace": namespace}})
    with running_agent(control_plane.kubeconfig, namespace=namespace) as agent:
        for doc in valid:
            _wait_ready(kube, namespace, doc["metadata"]["name"])
        before = {o["metadata"]["uid"] for o in _owned(kube, namespace)}
        stored: list[tuple[str, BadGraph]] = []
        for i, bad in enumerate(batch):
            doc = _named(bad, i)
            code, _, _ = dry_run_create(kube, namespace, doc)
            if code >= 400:
                figures.count(AGENT_TABLE, "rejected by the API server")
                continue
            _create(kube, namespace, doc)
            stored.append((doc["metadata"]["name"], bad))
        assert len(stored) >= 5, "too few graphs got past the API server to test the agent"
        for name, bad in stored:
            expect, field = _expected(kube, namespace, name)
            if expect == "serve":
                figures.count(AGENT_TABLE, "stored valid after the server pruned the mutation")
                continue
            eventually(
                lambda name=name, expect=expect, field=field: _reports(
                    kube.get(DGD, namespace, name), expect, field
                ),
                deadline=DEADLINE,
                what=f"{name} ({bad.kind} at {bad.path}) to get a condition naming {field}",
            )
            figures.count(
                AGENT_TABLE, f"stored by the server, condition names the field ({expect})"
            )
        assert agent.proc.poll() is None, agent.logs()[-4000:]
        crashes = unexpected_exceptions(agent.logs())
        assert crashes == [], crashes[0]
        deletes = agent.scrape().requests(
            verbs=("delete",), dry_run="false", exclude=("leases", "events")
        )
        assert deletes == 0
        after = {o["metadata"]["uid"] for o in _owned(kube, namespace)}
        assert before <= after, "an object of a valid graph went away"
        for doc in valid:
            live = kube.get(DGD, namespace, doc["metadata"]["name"])
            ready = condition(live, status.READY)
            assert ready["status"] == "True", (
                doc["metadata"]["name"],
                ready,
                [n for n, _ in stored],
            )
        _still_served(kube, namespace, valid[0])


def unexpected_exceptions(logs: str) -> list[str]:
    """Logged tracebacks other than a reconcile's ``RetryLater`` (a handled failure whose
    message names the object and field, e.g. a Deployment the apps API refuses)."""
    out = []
    for line in logs.splitlines():
        if "Traceback" not in line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            out.append(line[:3000])  # not even a log record: a bare traceback
            continue
        last = str(record.get("traceback", "")).strip().splitlines()[-1:]
        if not last or not last[0].startswith("syncagent.controller.RetryLater: "):
            out.append(line[:3000])
    return out


def _wait_ready(kube: Kube, ns: str, name: str) -> None:
    def ready() -> bool:
        simulate_ready(kube, ns)
        return condition(kube.get(DGD, ns, name), status.READY).get("status") == "True"

    eventually(ready, deadline=DEADLINE, what=f"{name} to become Ready")


def _owned(kube: Kube, ns: str) -> list[dict[str, Any]]:
    return [
        *kube.list("DynamoComponentDeployment", ns),
        *kube.list("Deployment", ns),
        *kube.list("Service", ns),
    ]


def _still_served(kube: Kube, ns: str, doc: dict[str, Any]) -> None:
    """A change to a valid graph still reaches its workload: the agent serves it."""
    name = doc["metadata"]["name"]
    live = kube.get(DGD, ns, name)
    assert live is not None
    comp = live["spec"]["components"][0]
    comp["replicas"] = int(comp.get("replicas", 1)) + 1
    kube.update(live)
    dcd = f"{name}-{comp['name'].lower()}"
    eventually(
        lambda: (
            (kube.get("DynamoComponentDeployment", ns, dcd) or {}).get("spec", {}).get("replicas")
            == comp["replicas"]
        ),
        deadline=DEADLINE,
        what=f"{dcd} to follow the new replicas",
    )

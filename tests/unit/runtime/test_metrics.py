import re
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from syncagent.programs.writemetrics import ApplyMetrics
from syncagent.runtime import metrics as metrics_module
from syncagent.runtime.client import RequestMetrics
from syncagent.runtime.metrics import Metrics, Registry
from syncagent.runtime.process import ProcessMetrics
from syncagent.runtime.queue import QueueMetrics
from syncagent.runtime.workers import ReconcileMetrics

SAMPLE = re.compile(
    r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\.)*",?)*\})? \S+$'
)


def test_counter_text_format():
    r = Registry()
    c = r.counter("x_total", "Things done.", ("kind", "result"))
    c.inc(kind="Deployment", result="created")
    c.inc(2, kind="Deployment", result="created")
    c.inc(kind="Service", result="unchanged")
    assert r.render() == (
        "# HELP x_total Things done.\n"
        "# TYPE x_total counter\n"
        'x_total{kind="Deployment",result="created"} 3.0\n'
        'x_total{kind="Service",result="unchanged"} 1.0\n'
    )


def test_label_values_and_help_are_escaped():
    r = Registry()
    c = r.counter("e_total", "a\\b\nc", ("v",))
    c.inc(v='say "hi"\\\n')
    text = r.render()
    assert "# HELP e_total a\\\\b\\nc\n" in text
    assert 'e_total{v="say \\"hi\\"\\\\\\n"} 1' in text
    for line in text.splitlines():
        assert line.startswith("#") or SAMPLE.match(line), line


def test_gauge_set_inc_dec_and_unlabelled():
    r = Registry()
    g = r.gauge("depth", "Depth.")
    g.set(5)
    g.inc()
    g.dec(3)
    assert g.value() == 3
    assert "depth 3.0\n" in r.render()


def test_histogram_buckets_are_cumulative_with_sum_and_count():
    r = Registry()
    h = r.histogram("d_seconds", "Durations.", ("c",), buckets=(0.1, 1.0))
    for v in (0.05, 0.1, 0.5, 3.0):
        h.observe(v, c="dgd")
    lines = r.render().splitlines()
    assert lines[1] == "# TYPE d_seconds histogram"
    assert lines[2:] == [
        'd_seconds_bucket{c="dgd",le="0.1"} 2.0',
        'd_seconds_bucket{c="dgd",le="1.0"} 3.0',
        'd_seconds_bucket{c="dgd",le="+Inf"} 4.0',
        'd_seconds_count{c="dgd"} 4.0',
        'd_seconds_sum{c="dgd"} 3.65',
    ]


def test_counter_cannot_decrease():
    c = Registry().counter("c_total", "C.")
    with pytest.raises(ValueError, match="cannot decrease"):
        c.inc(-1)


def test_wrong_labels_are_rejected_naming_the_metric():
    c = Registry().counter("c_total", "C.", ("a",))
    with pytest.raises(ValueError, match="c_total"):
        c.inc(b="x")


def test_duplicate_registration_is_rejected():
    r = Registry()
    r.counter("c_total", "C.")
    with pytest.raises(ValueError, match="already registered"):
        r.gauge("c_total", "again")


def test_histogram_rejects_unsorted_buckets_and_le_label():
    r = Registry()
    with pytest.raises(ValueError, match="increasing"):
        r.histogram("h1", "H.", buckets=(1.0, 0.5))
    with pytest.raises(ValueError, match="reserved"):
        r.histogram("h2", "H.", ("le",))


def test_total_sums_matching_label_sets():
    c = Registry().counter("r_total", "R.", ("verb", "dry_run"))
    c.inc(verb="patch", dry_run="true")
    c.inc(2, verb="patch", dry_run="false")
    c.inc(verb="get", dry_run="false")
    assert c.total(verb="patch") == 3
    assert c.total(dry_run="false") == 3
    assert c.total() == 4


def test_agent_metrics_render_every_declared_family():
    m = Metrics()
    m.of(ReconcileMetrics).reconciles.inc(controller="dgd", result="success")
    m.of(ReconcileMetrics).reconcile_duration.observe(0.2, controller="dgd")
    m.of(ApplyMetrics).apply_actions.inc(kind="Deployment", result="unchanged")
    m.of(ApplyMetrics).conflicts.inc(kind="Deployment", manager="kubectl")
    m.of(QueueMetrics).queue_depth.set(4, queue="dgd")
    m.of(RequestMetrics).api_requests.inc(
        verb="patch", resource="deployments", dry_run="true", code="200"
    )
    text = m.render()
    for family in (
        "syncagent_reconcile_total",
        "syncagent_reconcile_duration_seconds",
        "syncagent_apply_actions_total",
        "syncagent_apply_conflicts_total",
        "syncagent_workqueue_depth",
        "syncagent_api_requests_total",
    ):
        assert f"# TYPE {family} " in text
    assert 'syncagent_workqueue_depth{queue="dgd"} 4.0' in text
    for line in text.splitlines():
        assert line.startswith("#") or SAMPLE.match(line), line


def _sample(text: str, name: str) -> float:
    (line,) = [line for line in text.splitlines() if line.startswith(name + " ")]
    return float(line.split()[1])


def test_process_gauges_are_measured_at_each_scrape():
    m = Metrics()
    memo: list[int] = []
    m.of(ProcessMetrics).measure_memo("convergence", memo.__len__)
    first = m.render()
    opened = open(__file__)  # noqa: SIM115 - one more descriptor while the next scrape runs
    memo.extend((1, 2, 3))
    try:
        second = m.render()
    finally:
        opened.close()
    assert _sample(first, "syncagent_process_resident_memory_bytes") > 1_000_000
    fds = "syncagent_process_open_fds"
    assert _sample(second, fds) == _sample(first, fds) + 1
    assert 'syncagent_memo_entries{memo="convergence"} 0.0' in first
    assert 'syncagent_memo_entries{memo="convergence"} 3.0' in second
    assert _sample(second, "syncagent_asyncio_tasks") == 0  # no event loop runs here


@pytest.mark.anyio
async def test_asyncio_tasks_counts_the_running_loops_tasks():
    m = Metrics()
    m.of(ProcessMetrics)
    before = _sample(m.render(), "syncagent_asyncio_tasks")
    async with anyio.create_task_group() as tg:
        tg.start_soon(anyio.sleep, 10)
        tg.start_soon(anyio.sleep, 10)
        await anyio.lowlevel.checkpoint()
        during = _sample(m.render(), "syncagent_asyncio_tasks")
        tg.cancel_scope.cancel()
    assert before >= 1
    assert during == before + 2


def test_a_declaration_is_made_once_per_registry():
    m = Metrics()
    first = m.of(QueueMetrics)
    # A second registration of the same names would raise "already registered".
    assert m.of(QueueMetrics) is first
    assert Metrics().of(QueueMetrics) is not first


def test_the_runtime_registry_names_no_metric():
    # The families are declared beside what they measure; runtime/metrics.py is the registry.
    source = Path(metrics_module.__file__).read_text(encoding="utf-8")
    assert re.findall(r"syncagent_\w+", source) == []

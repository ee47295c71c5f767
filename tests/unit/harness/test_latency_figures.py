"""The arithmetic of bench/latency.py (tests/support/latency_figures.py)."""

from __future__ import annotations

import math

from tests.support import latency_figures as lf
from tests.support.agent import parse_metrics

INF = math.inf


def scrape(counts: dict[str, int], *, queue: str = "dgd") -> dict:
    lines = [f'h_bucket{{le="{le}",queue="{queue}"}} {n}' for le, n in counts.items()]
    return parse_metrics("\n".join(lines))


def test_nearest_rank_returns_an_observed_value():
    values = [0.3, 0.1, 0.2, 0.9]
    assert lf.nearest_rank(values, 0.5) == 0.2
    assert lf.nearest_rank(values, 0.99) == 0.9
    assert lf.nearest_rank(values, 0.0) == 0.1
    assert math.isnan(lf.nearest_rank([], 0.5))


def test_buckets_sum_the_matching_label_sets_and_subtract_an_earlier_scrape():
    before = scrape({"0.1": 2, "1": 3, "+Inf": 3})
    after = {
        **scrape({"0.1": 2, "1": 5, "+Inf": 6}),
        **scrape({"0.1": 7, "1": 7, "+Inf": 7}, queue="dcd"),
    }
    assert lf.buckets(after, "h", queue="dgd") == [(0.1, 2), (1.0, 5), (INF, 6)]
    assert lf.buckets(after, "h") == [(0.1, 9), (1.0, 12), (INF, 13)]
    seen = lf.difference(lf.buckets(before, "h"), lf.buckets(after, "h", queue="dgd"))
    assert seen == [(0.1, 0), (1.0, 2), (INF, 3)]


def test_quantiles_interpolate_within_a_bucket_and_the_max_is_a_bucket_bound():
    seen = [(0.1, 0.0), (1.0, 2.0), (2.0, 4.0), (INF, 4.0)]
    assert lf.quantile(seen, 0.5) == 1.0
    assert lf.quantile(seen, 0.25) == 0.55  # halfway through (0.1, 1]
    assert lf.most(seen) == 2.0
    assert lf.most([(1.0, 1.0), (INF, 2.0)]) == INF
    assert lf.quantile([(1.0, 1.0), (INF, 2.0)], 0.99) == 1.0
    assert math.isnan(lf.quantile([(1.0, 0.0), (INF, 0.0)], 0.5))
    assert math.isnan(lf.most([]))


def test_a_stage_between_two_scrapes():
    before = scrape({"0.1": 1, "1": 1, "+Inf": 1})
    after = scrape({"0.1": 1, "1": 3, "+Inf": 3})
    found = lf.stage(before, after, "dgd queue wait", "h", queue="dgd")
    assert (found.count, found.p50, found.max_bound) == (2, 0.55, 1.0)
    assert found.line().startswith("dgd queue wait: p50 0.550s, p99 0.991s, max <= 1s (2 ")
    assert lf.stage(before, before, "idle", "h").line() == "idle: no observations"


def test_cpu_seconds_read_utime_and_stime_past_a_command_name_with_spaces():
    stat = "4242 (python3 -m x) S 1 2 3 4 5 6 7 8 9 10 250 150 0 0 20 0 1 0 100 0 0"
    assert lf.cpu_seconds(stat, ticks=100) == 4.0

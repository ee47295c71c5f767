import pytest

from syncagent.runtime.backoff import Backoff


def fixed(value: float):
    return lambda: value


def test_doubles_from_base_without_jitter():
    b = Backoff(base=0.5, cap=100, jitter=0.0)
    assert [b.delay(n) for n in range(1, 6)] == [0.5, 1.0, 2.0, 4.0, 8.0]


def test_capped():
    b = Backoff(base=1, cap=10, jitter=0.0)
    assert b.delay(5) == 10
    assert b.delay(10_000) == 10  # no overflow for long outages


def test_no_failures_no_delay():
    assert Backoff().delay(0) == 0


def test_jitter_spreads_within_bounds():
    low = Backoff(base=1, cap=100, jitter=0.2, rand=fixed(0.0))
    high = Backoff(base=1, cap=100, jitter=0.2, rand=fixed(0.999999))
    mid = Backoff(base=1, cap=100, jitter=0.2, rand=fixed(0.5))
    assert low.delay(3) == pytest.approx(4 * 0.8)
    assert high.delay(3) == pytest.approx(4 * 1.2, rel=1e-5)
    assert mid.delay(3) == pytest.approx(4)


def test_jitter_never_exceeds_cap():
    b = Backoff(base=1, cap=8, jitter=0.5, rand=fixed(0.999))
    assert b.delay(20) == 8


def test_real_random_jitter_varies_and_stays_in_range():
    b = Backoff(base=1, cap=100, jitter=0.25)
    delays = {b.delay(4) for _ in range(200)}
    assert len(delays) > 1
    assert all(6 <= d <= 10 for d in delays)


@pytest.mark.parametrize(
    "kwargs", [{"base": 0}, {"base": 2, "cap": 1}, {"jitter": 1.0}, {"jitter": -0.1}]
)
def test_rejects_bad_parameters(kwargs):
    with pytest.raises(ValueError, match="backoff"):
        Backoff(**kwargs)

import re

import pytest

from syncagent.runtime.leader import LeaseConfig, default_identity, micro_time


def test_micro_time_always_has_six_fraction_digits():
    assert micro_time(0) == "1970-01-01T00:00:00.000000Z"
    assert micro_time(1.5) == "1970-01-01T00:00:01.500000Z"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", micro_time(1_700_000_000.123))


@pytest.mark.parametrize(
    "timings",
    [
        {"lease_duration": 10, "renew_deadline": 10, "retry_period": 2},
        {"lease_duration": 15, "renew_deadline": 2, "retry_period": 2},
        {"lease_duration": 15, "renew_deadline": 10, "retry_period": 0},
    ],
)
def test_lease_config_rejects_unsafe_timings(timings):
    with pytest.raises(ValueError, match="Lease/ns/syncagent: need lease duration"):
        LeaseConfig(namespace="ns", identity="me", **timings)


def test_lease_config_needs_identity():
    with pytest.raises(ValueError, match="identity"):
        LeaseConfig(namespace="ns")


def test_default_identity_is_unique():
    assert default_identity() != default_identity()

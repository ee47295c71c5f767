"""Shard settings (runtime/shard.py): Lease naming and refusals. The selector grammar is held
against the real API server in tests/cluster/test_agent_shards.py."""

from __future__ import annotations

import pytest

from syncagent.runtime.shard import ShardSettings


def test_each_shard_has_its_own_lease_and_an_unsharded_agent_keeps_the_base_name():
    assert ShardSettings(name="a", selector="shard=a").lease_name("syncagent") == "syncagent-a"
    assert ShardSettings().lease_name("syncagent") == "syncagent"
    assert ShardSettings().matches({"anything": "x"})


@pytest.mark.parametrize(
    ("name", "selector", "message"),
    [
        ("", "shard=a", "--shard-selector needs --shard-name"),
        ("Bad_Name", "", "--shard-name 'Bad_Name'"),
        ("a", "shard in a", "cannot read 'shard in a'"),
        ("a", "=x", "cannot read '=x'"),
    ],
)
def test_bad_shard_settings_are_refused_at_start(name, selector, message):
    with pytest.raises(ValueError, match=message):
        ShardSettings(name=name, selector=selector)

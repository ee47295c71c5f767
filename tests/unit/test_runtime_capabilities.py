import argparse

import pytest

from syncagent.cli import flags
from syncagent.programs import capabilities as caps
from syncagent.programs.capabilities import (
    DISAGGREGATEDSETS,
    DYNAMOCHECKPOINTS,
    LEADERWORKERSETS,
    PODCLIQUESETS,
    CapabilityRequiredError,
    Setting,
)

ALL = {PODCLIQUESETS, LEADERWORKERSETS, DISAGGREGATEDSETS}


def parse(*values: str, offline: bool = False) -> dict[str, Setting]:
    parser = argparse.ArgumentParser()
    flags.add_capability_argument(parser, offline=offline)
    args = parser.parse_args([a for v in values for a in ("--capability", v)])
    return caps.capability_overrides(args.capability, offline=offline)


def test_parse_defaults_to_auto_online_and_true_offline():
    assert parse() == dict.fromkeys(caps.NAMES, Setting.AUTO)
    assert parse(offline=True) == dict.fromkeys(caps.NAMES, Setting.TRUE)


def test_parse_repeatable_last_wins_and_case_insensitive_values():
    settings = parse("grove=false", "lws=TRUE", "grove=auto")
    assert settings["grove"] is Setting.AUTO
    assert settings["lws"] is Setting.TRUE
    assert settings["disaggregatedSet"] is Setting.AUTO


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("grove", "expected NAME=auto|true|false"),
        ("volcano=true", "unknown capability 'volcano'"),
        ("grove=yes", "unknown value 'yes'"),
        ("disaggregatedset=true", "unknown capability 'disaggregatedset'"),
    ],
)
def test_parse_rejects_bad_values_naming_them(value, fragment):
    with pytest.raises(argparse.ArgumentTypeError, match=fragment):
        flags.parse_capability(value)


def test_parse_errors_are_usage_errors(capsys):
    parser = argparse.ArgumentParser(prog="x")
    flags.add_capability_argument(parser)
    with pytest.raises(SystemExit) as exc:
        parser.parse_args(["--capability", "grove=maybe"])
    assert exc.value.code == 2
    assert "grove=maybe" in capsys.readouterr().err


def test_offline_rejects_auto():
    with pytest.raises(ValueError, match="reads no cluster"):
        caps.capability_overrides([("grove", Setting.AUTO)], offline=True)


def test_disaggregated_set_true_with_lws_false_is_contradictory():
    with pytest.raises(ValueError, match="lws=false"):
        caps.capability_overrides([("lws", Setting.FALSE), ("disaggregatedSet", Setting.TRUE)])


def test_example_1_everything_served():
    got = caps.resolve(ALL, parse())
    assert (got.grove, got.lws, got.disaggregated_set) == (True, True, True)
    assert got.grove_api
    assert got.disaggregated_set_api
    assert not got.checkpoint_api


def test_example_2_lws_without_ds():
    got = caps.resolve({LEADERWORKERSETS}, parse())
    assert got.lws
    assert not got.disaggregated_set
    assert not got.disaggregated_set_api


def test_example_3_lws_false_switches_ds_off_but_not_the_api():
    got = caps.resolve({LEADERWORKERSETS, DISAGGREGATEDSETS}, parse("lws=false"))
    assert not got.lws
    assert not got.disaggregated_set
    assert got.disaggregated_set_api


def test_ds_needs_lws_served():
    got = caps.resolve({DISAGGREGATEDSETS}, parse())
    assert not got.disaggregated_set
    assert got.disaggregated_set_api


def test_example_5_required_but_not_served():
    with pytest.raises(CapabilityRequiredError) as exc:
        caps.resolve({LEADERWORKERSETS}, parse("grove=true"))
    assert str(exc.value) == (
        'capability "grove" is required but grove.io/v1alpha1 podcliquesets is not served'
    )


def test_required_ds_names_the_first_missing_resource():
    with pytest.raises(CapabilityRequiredError, match=r"disaggregatedset\.x-k8s\.io/v1"):
        caps.resolve(set(), parse("disaggregatedSet=true"))


def test_required_stays_on_when_a_refresh_misses_it():
    got = caps.resolve(set(), parse("grove=true"), strict=False)
    assert got.grove
    assert not got.grove_api


def test_false_switches_off_what_is_served():
    got = caps.resolve(ALL, parse("grove=false"))
    assert not got.grove
    assert got.grove_api


def test_api_capabilities_ignore_configuration():
    got = caps.resolve(ALL | {DYNAMOCHECKPOINTS}, parse("grove=false", "disaggregatedSet=false"))
    assert got.grove_api
    assert got.disaggregated_set_api
    assert got.checkpoint_api


def test_offline_everything_on_unless_switched_off():
    assert caps.offline(parse(offline=True)).grove
    got = caps.offline(parse("grove=false", "lws=false", offline=True))
    assert (got.grove, got.lws, got.disaggregated_set) == (False, False, False)


def test_as_dict_uses_spec_names():
    got = caps.resolve(ALL, parse()).as_dict()
    assert set(got) == {
        "grove",
        "lws",
        "disaggregatedSet",
        "groveAPI",
        "disaggregatedSetAPI",
        "checkpointAPI",
    }

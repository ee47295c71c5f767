"""Capabilities (docs/routing.md §1): declared by the pathways, listed by the registry, folded
from ``--capability`` and resolved against what the API server serves."""

import argparse
from typing import Any

import pytest

from syncagent.cli import flags
from syncagent.cli.pathways import PROGRAMS
from syncagent.kube import kinds
from syncagent.programs import capabilities as caps
from syncagent.programs.capabilities import CapabilityRequiredError, Setting
from syncagent.programs.disaggregatedset.program import CAPABILITY as DS
from syncagent.programs.grove.program import CAPABILITY as GROVE
from syncagent.programs.registry import Registry
from tests.support.toypathway import CAPABILITY as TOY_CAPABILITY
from tests.support.toypathway import TOY
from tests.support.toypathway.agent import PROGRAMS as WITH_TOY

DECLARED = PROGRAMS.capabilities()
PODCLIQUESETS = kinds.POD_CLIQUE_SET
LEADERWORKERSETS = kinds.LEADER_WORKER_SET
DISAGGREGATEDSETS = kinds.DISAGGREGATED_SET
DYNAMOCHECKPOINTS = kinds.CHECKPOINT
ALL = {PODCLIQUESETS, LEADERWORKERSETS, DISAGGREGATEDSETS}


def parse(*values: str, offline: bool = False, programs: Registry = PROGRAMS) -> dict[str, Setting]:
    declared = programs.capabilities()
    parser = argparse.ArgumentParser()
    flags.add_capability_argument(parser, declared=declared, offline=offline)
    args = parser.parse_args([a for v in values for a in ("--capability", v)])
    return caps.capability_overrides(args.capability, declared=declared, offline=offline)


def resolve(served: Any, settings: dict[str, Setting], **kw: Any) -> caps.Capabilities:
    return caps.resolve(served, settings, declared=DECLARED, **kw)


def on(got: caps.Capabilities) -> tuple[bool, bool, bool]:
    return got.has(GROVE), got.has(caps.LWS), got.has(DS)


@pytest.mark.parametrize("programs", [PROGRAMS, WITH_TOY], ids=["shipped", "with-toy"])
def test_the_registry_lists_each_capability_once_after_what_it_needs(programs: Registry):
    declared = programs.capabilities()
    names = [c.name for c in declared]
    assert len(names) == len(set(names))
    for at, capability in enumerate(declared):
        assert all(names.index(need.name) < at for need in capability.needs)
    wanted = {p.capability.name for p in programs.programs if p.capability is not None}
    assert set(names) == wanted | {c.name for c in caps.COMMON}


def test_parse_defaults_to_auto_online_and_true_offline():
    names = [c.name for c in DECLARED]
    assert parse() == dict.fromkeys(names, Setting.AUTO)
    assert parse(offline=True) == dict.fromkeys(names, Setting.TRUE)


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
        flags.parse_capability(value, names=[c.name for c in DECLARED])


def test_parse_errors_are_usage_errors(capsys):
    parser = argparse.ArgumentParser(prog="x")
    flags.add_capability_argument(parser, declared=DECLARED)
    with pytest.raises(SystemExit) as exc:
        parser.parse_args(["--capability", "grove=maybe"])
    assert exc.value.code == 2
    assert "grove=maybe" in capsys.readouterr().err


def test_offline_rejects_auto():
    with pytest.raises(ValueError, match="reads no cluster"):
        caps.capability_overrides([("grove", Setting.AUTO)], declared=DECLARED, offline=True)


def test_disaggregated_set_true_with_lws_false_is_contradictory():
    with pytest.raises(ValueError, match="lws=false"):
        caps.capability_overrides(
            [("lws", Setting.FALSE), ("disaggregatedSet", Setting.TRUE)], declared=DECLARED
        )


def test_example_1_everything_served():
    got = resolve(ALL, parse())
    assert on(got) == (True, True, True)
    assert (got.apis["grove"], got.apis["disaggregatedSet"]) == (True, True)
    assert not got.apis["checkpoint"]


def test_example_2_lws_without_ds():
    got = resolve({LEADERWORKERSETS}, parse())
    assert got.has(caps.LWS)
    assert not got.has(DS)
    assert not got.apis["disaggregatedSet"]


def test_example_3_lws_false_switches_ds_off_but_not_the_api():
    got = resolve({LEADERWORKERSETS, DISAGGREGATEDSETS}, parse("lws=false"))
    assert not got.has(caps.LWS)
    assert not got.has(DS)
    assert got.apis["disaggregatedSet"]


def test_ds_needs_lws_served():
    got = resolve({DISAGGREGATEDSETS}, parse())
    assert not got.has(DS)
    assert got.apis["disaggregatedSet"]


def test_example_5_required_but_not_served():
    with pytest.raises(CapabilityRequiredError) as exc:
        resolve({LEADERWORKERSETS}, parse("grove=true"))
    assert str(exc.value) == (
        'capability "grove" is required but grove.io/v1alpha1 podcliquesets is not served'
    )


def test_required_ds_names_the_first_missing_resource():
    with pytest.raises(CapabilityRequiredError, match=r"disaggregatedset\.x-k8s\.io/v1"):
        resolve(set(), parse("disaggregatedSet=true"))


def test_required_stays_on_when_a_refresh_misses_it():
    got = resolve(set(), parse("grove=true"), strict=False)
    assert got.has(GROVE)
    assert not got.apis["grove"]


def test_false_switches_off_what_is_served():
    got = resolve(ALL, parse("grove=false"))
    assert not got.has(GROVE)
    assert got.apis["grove"]


def test_api_capabilities_ignore_configuration():
    got = resolve(ALL | {DYNAMOCHECKPOINTS}, parse("grove=false", "disaggregatedSet=false"))
    assert (got.apis["grove"], got.apis["disaggregatedSet"], got.apis["checkpoint"]) == (
        True,
        True,
        True,
    )


def test_offline_everything_on_unless_switched_off():
    assert caps.offline(parse(offline=True), declared=DECLARED).has(GROVE)
    got = caps.offline(parse("grove=false", "lws=false", offline=True), declared=DECLARED)
    assert on(got) == (False, False, False)


def test_a_new_pathways_capability_comes_from_its_package_alone():
    """The toy pathway declares ``toy`` in its program: ``--capability`` takes it, discovery
    switches it on where ToySets are served, and it reports ``toyAPI``."""
    declared = WITH_TOY.capabilities()
    assert TOY_CAPABILITY in declared
    assert (TOY.group, TOY.version) in WITH_TOY.group_versions()
    got = caps.resolve({TOY}, parse(programs=WITH_TOY), declared=declared)
    assert got.has(TOY_CAPABILITY)
    assert got.as_dict()["toyAPI"]
    off = caps.resolve({TOY}, parse("toy=false", programs=WITH_TOY), declared=declared)
    assert not off.has(TOY_CAPABILITY)
    with pytest.raises(CapabilityRequiredError, match=r"toy\.example\.com/v1 toysets"):
        caps.resolve(set(), parse("toy=true", programs=WITH_TOY), declared=declared)
    with pytest.raises(SystemExit):
        parse("toy=false")  # the shipped registry has no such capability


def test_as_dict_uses_spec_names():
    """Every declared capability, ``<name>API`` of those that report it, and ``checkpointAPI``
    (docs/routing.md §1 names the shipped ones)."""
    got = resolve(ALL, parse()).as_dict()
    apis = {f"{c.name}API" for c in DECLARED if c.api}
    assert set(got) == {c.name for c in DECLARED} | apis | {"checkpointAPI"}
    shipped = {"grove", "lws", "disaggregatedSet", "groveAPI", "disaggregatedSetAPI"}
    assert shipped <= set(got)

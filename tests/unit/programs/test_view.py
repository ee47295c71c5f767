"""Namespace facts for the renderer and the ``syncagent run`` command line."""

from __future__ import annotations

import argparse
import base64

import orjson
import pytest

from syncagent.cli.flags import duration
from syncagent.cli.main import build_parser
from syncagent.cli.pathways import PROGRAMS
from syncagent.programs import registry
from syncagent.programs.view import (
    DictStore,
    checkpoint_readiness,
    environment,
    pull_secret,
    pull_secret_summary,
)

FLAGS = (
    "--kubeconfig",
    "--context",
    "--namespace",
    "--concurrency",
    "--capability",
    "--discovery-backend",
    "--metrics-bind-address",
    "--health-probe-bind-address",
    "--leader-elect",
    "--no-leader-elect",
    "--leader-election-namespace",
    "--resync-period",
)


def secret(name: str, auths: dict, kind: str = "kubernetes.io/dockerconfigjson") -> dict:
    data = base64.b64encode(orjson.dumps({"auths": auths})).decode()
    return {
        "metadata": {"name": name, "namespace": "ns"},
        "type": kind,
        "data": {".dockerconfigjson": data},
    }


def test_pull_secrets_and_labelled_service_accounts_feed_the_environment():
    store = DictStore(
        {
            "Secret": [
                secret("b", {"https://index.docker.io/v1/": {}}),
                secret("a", {"nvcr.io": {}}),
                secret("opaque", {"nvcr.io": {}}, kind="Opaque"),
            ],
            "ServiceAccount": [
                {
                    "metadata": {
                        "name": "z",
                        "namespace": "ns",
                        "labels": {"nvidia.com/dynamo-component-pod": "true"},
                    }
                },
                {"metadata": {"name": "y", "namespace": "ns"}},
            ],
            "DynamoCheckpoint": [
                {"metadata": {"name": "ck1", "namespace": "ns"}, "status": {"phase": "Ready"}}
            ],
        }
    )
    env = environment(store, "ns", discovery_backend="etcd", checkpoints={"ck1": True})
    assert [s.name for s in env.pull_secrets] == ["a", "b"]
    assert env.pull_secrets[1].registries == frozenset({"docker.io"})
    assert env.component_pod_service_accounts == ("z",)
    assert env.discovery_backend == "etcd"
    assert checkpoint_readiness(store, "ns", ["ck1", "ck2"]) == {"ck1": True, "ck2": False}


def test_broken_pull_secret_is_ignored():
    bad = {
        "metadata": {"name": "x"},
        "type": "kubernetes.io/dockerconfigjson",
        "data": {".dockerconfigjson": "!!"},
    }
    assert pull_secret(bad) is None


def test_the_pull_secret_cache_keeps_name_and_registries_never_the_data():
    """Issue 26 item 2: the watch's cache holds the summary; renders see the same facts."""
    keep = registry.PULL_SECRET_WATCH.transform
    assert keep is pull_secret_summary
    whole = [secret("b", {"https://index.docker.io/v1/": {"auth": "c2VjcmV0"}}), secret("a", {})]
    whole.append({**secret("bad", {}), "data": {".dockerconfigjson": "!!"}})
    kept = [keep(s) for s in whole]
    for summary in kept:
        assert "data" not in summary
        assert "c2VjcmV0" not in orjson.dumps(summary).decode()
    assert kept[0]["registries"] == ["docker.io"]
    assert [keep(s) for s in kept] == kept  # a summary summarises to itself
    from_whole = environment(DictStore({"Secret": whole}), "ns", discovery_backend="kubernetes")
    from_kept = environment(DictStore({"Secret": kept}), "ns", discovery_backend="kubernetes")
    assert from_kept == from_whole
    assert [s.name for s in from_kept.pull_secrets] == ["a", "b"]


@pytest.mark.parametrize(
    ("text", "seconds"), [("90", 90.0), ("30s", 30.0), ("10m", 600.0), ("1h30m", 5400.0)]
)
def test_durations(text, seconds):
    assert duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "-5", "0"])
def test_bad_durations(text):
    with pytest.raises(argparse.ArgumentTypeError):
        duration(text)


def test_run_help_documents_every_flag(capsys):
    with pytest.raises(SystemExit):
        build_parser(PROGRAMS).parse_args(["run", "--help"])
    text = capsys.readouterr().out
    for flag in FLAGS:
        assert flag in text


def test_run_flags_parse():
    args = build_parser(PROGRAMS).parse_args(
        [
            "run",
            "-n",
            "a",
            "-n",
            "b",
            "--concurrency",
            "3",
            "--capability",
            "grove=false",
            "--no-leader-elect",
            "--resync-period",
            "5m",
        ]
    )
    assert args.namespace == ["a", "b"]
    assert args.concurrency == 3
    assert args.leader_elect is False
    assert args.resync_period == 300.0
    assert (args.capability[0][0],) == ("grove",)

"""Pure parts of the Grove operator in the simulated cluster: the source lookup and its pin, the
build's patch of the scheduler registry, the cache key, the operator's config, its webhook
configurations on loopback, and what ``dev-cluster up`` says about Grove before any build."""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from syncagent.devcluster import grove_operator, versions

# Shaped like upstream's internal/scheduler/registry/registry.go at the pinned tag.
REGISTRY = """import (
\t"fmt"

\t"github.com/ai-dynamo/grove/operator/internal/scheduler"
\t"github.com/ai-dynamo/grove/operator/internal/scheduler/kai"
\t"github.com/ai-dynamo/grove/operator/internal/scheduler/kube"
\t"github.com/ai-dynamo/grove/operator/internal/scheduler/volcano"
)

func newSchedulerBackend(cl client.Client, p configv1alpha1.SchedulerProfile) (scheduler.Backend, error) {
\tswitch p.Name {
\tcase configv1alpha1.SchedulerNameKube:
\t\tb = kube.New(cl, scheme, rec, p)
\tcase configv1alpha1.SchedulerNameKai:
\t\tb = kai.New(cl, scheme, rec, p)
\tcase configv1alpha1.SchedulerNameVolcano:
\t\tb = volcano.New(cl, scheme, rec, p)
\t}
}
"""


def test_the_build_drops_the_refused_backends_and_keeps_kube() -> None:
    patched = grove_operator.without_backends(REGISTRY, versions.GROVE_OMITTED_BACKENDS)
    assert 'scheduler/kai"' not in patched
    assert 'scheduler/volcano"' not in patched
    assert "kai.New" not in patched
    assert "volcano.New" not in patched
    assert '"github.com/ai-dynamo/grove/operator/internal/scheduler/kube"' in patched
    assert "\t\tb = kube.New(cl, scheme, rec, p)\n" in patched
    assert patched.count("this build leaves out the") == 2
    assert "\t\treturn nil, fmt.Errorf(" in patched


def test_a_registry_of_another_shape_fails_the_build() -> None:
    changed = REGISTRY.replace("b = kai.New(cl, scheme, rec, p)", "b = kai.NewBackend(p)")
    with pytest.raises(grove_operator.GroveSourceError, match="kai backend"):
        grove_operator.without_backends(changed, versions.GROVE_OMITTED_BACKENDS)


def test_the_binary_is_cached_by_version_and_by_what_it_leaves_out(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SYNCAGENT_CACHE", str(tmp_path))
    folder = f"grove-operator-{versions.GROVE}_without-kai-volcano"
    assert grove_operator.binary_path() == tmp_path / "bin" / folder / "grove-operator"


def test_the_source_is_found_through_the_reference_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SYNCAGENT_REFERENCE", str(tmp_path))
    assert grove_operator.find_source() is None
    (tmp_path / "source").mkdir()
    tarball = tmp_path / "source" / versions.GROVE_SOURCE
    tarball.write_bytes(b"x")
    assert grove_operator.find_source() == tarball
    assert grove_operator.find_source(Path("/elsewhere.tgz")) == Path("/elsewhere.tgz")


def test_only_the_pinned_tarball_is_built(tmp_path: Path) -> None:
    other = tmp_path / "grove.tgz"
    other.write_bytes(b"not grove")
    digest = hashlib.sha256(b"not grove").hexdigest()
    with pytest.raises(grove_operator.GroveSourceError, match=f"sha256 {digest} is not the pinned"):
        grove_operator.check_source(other)
    with pytest.raises(grove_operator.GroveSourceError, match="no such file"):
        grove_operator.check_source(tmp_path / "absent.tgz")


def test_operator_config_binds_loopback_with_our_certificates() -> None:
    ports = {"webhooks": 1, "healthProbes": 2, "metrics": 3}
    config = yaml.safe_load(grove_operator.config_file(ports=ports, cert_dir=Path("/pki/w")))
    assert config["kind"] == "OperatorConfiguration"
    assert config["server"]["webhooks"] == {
        "bindAddress": "127.0.0.1",
        "port": 1,
        "serverCertDir": "/pki/w",
        "certProvisionMode": "manual",
    }
    assert config["server"]["healthProbes"] == {"bindAddress": "127.0.0.1", "port": 2}
    assert config["server"]["metrics"] == {"bindAddress": "127.0.0.1", "port": 3}
    assert config["leaderElection"] == {"enabled": False}
    assert config["scheduler"]["profiles"] == [{"name": "default-scheduler"}]
    assert config["authorizer"] == {"enabled": False}


def test_chart_webhooks_call_loopback_with_our_ca() -> None:
    service = {"name": "grove-operator", "namespace": "grove-system", "port": 9443}
    docs = [
        {
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": "podcliqueset-defaulting-webhook"},
            "webhooks": [
                {
                    "name": "pcs.defaulting.webhooks.grove.io",
                    "clientConfig": {"service": {**service, "path": "/webhooks/default-pcs"}},
                    "failurePolicy": "Fail",
                }
            ],
        }
    ]
    (doc,) = grove_operator.on_loopback(docs, port=8443, ca_pem=b"CA")
    (hook,) = doc["webhooks"]
    assert hook["clientConfig"] == {
        "url": "https://127.0.0.1:8443/webhooks/default-pcs",
        "caBundle": base64.b64encode(b"CA").decode(),
    }
    assert hook["failurePolicy"] == "Fail"


def test_the_defaulting_probe_leaves_out_what_the_webhook_defaults() -> None:
    probe = grove_operator.defaulting_probe()
    assert "terminationDelay" not in probe["spec"]["template"]
    assert probe["kind"] == "PodCliqueSet"


def _up(*args: str, cache: Path, reference: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "syncagent.cli.main", "dev-cluster", "up", "--name", "x", *args],
        capture_output=True,
        text=True,
        check=False,
        env={"SYNCAGENT_CACHE": str(cache), "SYNCAGENT_REFERENCE": str(reference), "PATH": ""},
    )


def test_up_says_plainly_when_there_is_no_grove_source(tmp_path: Path) -> None:
    proc = _up(cache=tmp_path / "cache", reference=tmp_path)
    # The build then fails (no Go here): the Grove line comes first, before any build.
    assert proc.returncode == 1
    assert proc.stdout.startswith("dev-cluster/x: no Grove operator: ")
    assert "Grove's CRDs only" in proc.stdout
    assert "--grove-source" in proc.stdout


def test_up_refuses_a_grove_source_that_is_not_the_pinned_one(tmp_path: Path) -> None:
    other = tmp_path / "grove.tgz"
    other.write_bytes(b"x")
    proc = _up("--grove-source", str(other), cache=tmp_path / "cache", reference=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: dev-cluster/x: --grove-source: ")
    assert "is not the pinned" in proc.stderr


def test_up_refuses_grove_source_with_bare(tmp_path: Path) -> None:
    proc = _up("--bare", "--grove-source", "g.tgz", cache=tmp_path, reference=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr == (
        "error: dev-cluster/x: --grove-source needs the simulated cluster; drop --bare\n"
    )

"""The chart installed for some namespaces, and a kubeconfig holding its ServiceAccount's token
(no tests here): the agent then runs with exactly the rights the chart grants."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import yaml
from lightkube import Client
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import Namespace, ServiceAccount

from syncagent.devcluster import ControlPlane
from tests.support.helm import Helm, token_config_dict


def token_kubeconfig(control_plane: ControlPlane, token: str, path: Path) -> Path:
    path.write_text(yaml.safe_dump(token_config_dict(control_plane, token)))
    return path


@contextlib.contextmanager
def chart_token(
    control_plane: ControlPlane,
    client: Client,
    namespaces: list[str],
    tmp_path: Path,
    *sets: str,
) -> Iterator[tuple[Path, str]]:
    """The chart installed (release ``<first namespace>-sys``) for ``namespaces``, with extra
    ``--set`` values ``sets``; yields its ServiceAccount's kubeconfig and the release."""
    release = f"{namespaces[0]}-sys"
    client.create(Namespace(metadata=ObjectMeta(name=release, labels={"syncagent-test": "1"})))
    helm = Helm(control_plane, tmp_path)
    try:
        watched = ",".join(namespaces)
        helm.install(
            release, release, "crds.install=false", f"watchNamespaces={{{watched}}}", *sets
        )
        try:
            account = f"{release}-syncagent"
            client.get(ServiceAccount, account, namespace=release)
            token = control_plane.token_for(namespace=release, service_account=account)
            yield token_kubeconfig(control_plane, token, tmp_path / "agent.kubeconfig"), release
        finally:
            helm.uninstall(release, release)
    finally:
        client.delete(Namespace, release)

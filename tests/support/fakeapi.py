"""A lightkube client config for a server that does not exist: unit tests swap the client's
transport for an httpx2 ``MockTransport`` (no tests here)."""

from __future__ import annotations

from lightkube.config.kubeconfig import SingleConfig
from lightkube.config.models import Cluster, Context, User

BASE = "https://api.test"


def offline_config(server: str = BASE) -> SingleConfig:
    return SingleConfig(
        context_name="t",
        context=Context(cluster="t", user="u"),
        cluster=Cluster(server=server),
        user=User(),
    )

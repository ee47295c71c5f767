"""Fixtures of the parity tier. It fails at once, before any control plane starts, without
upstream's data."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from lightkube import Client, KubeConfig
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import Namespace

from syncagent.ssa.api import KubeApi
from tests.parity.support.reference import require_reference


@pytest.fixture(scope="session", autouse=True)
def reference_data() -> Path:
    return require_reference()


@pytest.fixture
def clusterenv_namespace(kubeconfig: KubeConfig) -> Iterator[str]:
    """A fresh namespace named as upstream's clusterenv names them (its contracts match
    ``clusterenv-*`` namespaces)."""
    name = f"clusterenv-{uuid.uuid4().hex[:8]}"
    with Client(config=kubeconfig) as c:
        c.create(Namespace(metadata=ObjectMeta(name=name)))
    yield name
    with Client(config=kubeconfig) as c:
        c.delete(Namespace, name)


@pytest.fixture
def api(async_client: httpx2.AsyncClient) -> KubeApi:
    """Raw apply on the test control plane: every field the server returns is kept."""
    return KubeApi(async_client)

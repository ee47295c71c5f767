"""The serving recorder of the migration tests cannot pass vacuously (issue 14 item 9): a watch
that breaks, or a recording that saw nothing, fails the ``with`` block."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from lightkube import Client, KubeConfig

from tests.cluster.support.serving import ServingRecorder
from tests.support.agent import kubeconfig_via
from tests.support.faults import FaultProxy
from tests.support.kube import Kube
from tests.support.polling import eventually


def _record_through_a_cut(recorder: ServingRecorder, proxy: FaultProxy) -> None:
    with recorder:
        proxy.cut()
        eventually(
            lambda: not any(t.is_alive() for t in recorder._threads),
            deadline=30,
            what="the recorder's watches to end when the server is unreachable",
        )


def _record_nothing(recorder: ServingRecorder) -> None:
    with recorder:
        pass


def test_a_broken_watch_fails_the_recording(control_plane, namespace):
    server = urlsplit(control_plane.server)
    proxy = FaultProxy((server.hostname, server.port))
    via = kubeconfig_via(control_plane.kubeconfig, f"https://127.0.0.1:{proxy.port}")
    try:
        with Client(config=KubeConfig.from_file(via)) as client:
            recorder = ServingRecorder(Kube(client), namespace, "g", [])
            with pytest.raises(AssertionError, match=r"stopped listening.*watch of"):
                _record_through_a_cut(recorder, proxy)
    finally:
        proxy.close()
        via.unlink()


def test_a_recording_without_events_fails(kube, namespace):
    recorder = ServingRecorder(kube, namespace, "g", [])
    with pytest.raises(AssertionError, match="saw no event"):
        _record_nothing(recorder)

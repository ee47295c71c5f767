"""The agent's side of field fights (docs/ownership.md §3): the detector, and where its findings go.

A fight is reported at once, not queued with a reconcile's other events: the detector decides
only once, and a reconcile whose status write fails drops its queued events. The report is a
Warning Event ``FieldFight`` on the graph (``syncagent conflicts`` reads it back from there,
through the annotation :data:`ANNOTATION`), a count in ``syncagent_field_fights_total`` and a log
line. Graph and component reconciles share one detector per agent process.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from fieldmanagers import FieldManager, metric_label
from syncagent.kube import kinds
from syncagent.kube.objects import Body
from syncagent.programs.writemetrics import FightMetrics
from syncagent.runtime.events import WARNING, EventRecorder, ObjectRef
from syncagent.runtime.metrics import Metrics
from syncagent.ssa.errors import Conflict
from syncagent.ssa.fights import Fight, FightDetector, Verdict

log = logging.getLogger(__name__)

REASON = "FieldFight"
ANNOTATION = "syncagent.dynamo.nvidia.com/field-fight"


class Fights:
    """One agent's fight detector, its Event recorder and metrics."""

    def __init__(
        self,
        detector: FightDetector,
        *,
        recorder: EventRecorder | None = None,
        metrics: Metrics | None = None,
        managers: tuple[FieldManager, ...] = (),
    ) -> None:
        self.detector = detector
        self.recorder = recorder
        self.metrics = metrics
        self.managers = managers  # the agent's (Registry.field_managers): their metric labels

    def judge(
        self,
        subject: str,
        *,
        kind: str,
        manager: str,
        conflicts: Sequence[Conflict],
        live: Mapping[str, Any] | None,
        graph: Mapping[str, Any] | None,
    ) -> Verdict:
        """The verdict on one dry run's conflicts; reports every fight it starts."""
        verdict = self.detector.observe(subject, manager=manager, conflicts=conflicts)
        for fight in verdict.fights:
            self._report(fight, kind=kind, graph=graph)
        return verdict

    def forced(self, subject: str, conflicts: Sequence[Conflict]) -> None:
        """A forced write took these fields back: a later conflict on them is a take-back."""
        self.detector.forced(subject, conflicts)

    def _report(self, fight: Fight, *, kind: str, graph: Mapping[str, Any] | None) -> None:
        message = fight.describe()
        log.warning(
            f"{fight.subject}: field fight: {message}",
            extra={"object": fight.subject, "fight": message},
        )
        if self.metrics is not None:
            self.metrics.of(FightMetrics).field_fights.inc(
                kind=kind, manager=metric_label(fight.other, ours=self.managers)
            )
        if self.recorder is not None and graph is not None:
            self.recorder.record(
                ObjectRef.of(graph),
                type=WARNING,
                reason=REASON,
                message=message,
                annotations={ANNOTATION: details(fight)},
            )


def details(fight: Fight) -> str:
    """The annotation of a ``FieldFight`` Event: what ``syncagent conflicts`` lists."""
    doc = {
        "object": fight.subject,
        "manager": fight.manager,
        "other": fight.other,
        "paths": list(fight.paths),
        "backoffSeconds": fight.backoff,
        "extended": fight.extended,
    }
    return orjson.dumps(doc).decode()


def graph_of_component(dcd: Mapping[str, Any]) -> Mapping[str, Any]:
    """The graph a component's fights are reported on: its controlling graph, else itself."""
    view = Body(dcd)
    ref = view.controller_of_kind(kinds.DGD.kind)
    if ref is None:
        return dcd
    return {
        "apiVersion": ref.api_version,
        "kind": kinds.DGD.kind,
        "metadata": {"name": ref.name, "namespace": view.meta.namespace, "uid": ref.uid},
    }

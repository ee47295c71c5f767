"""The startup order of a PodCliqueSet and the values Grove fixes when it is created. Pure.

Upstream (``applyCliqueStartupDependencies`` in ``internal/dynamo/graph.go``) orders cliques
only for a multinode TensorRT-LLM component: its leader starts after its workers, because the
leader's ``mpirun`` reaches the workers' ``sshd``. SGLang and vLLM leaders and workers find each
other on their own, so they start in any order. The PodCliqueSet's ``cliqueStartupType`` is
``Explicit`` as soon as one clique has a ``startsAfter``.

Grove refuses a change of ``cliqueStartupType``, ``startsAfter`` or a clique's ``minAvailable``
after creation, so once a PodCliqueSet exists those values are taken from it (:class:`Fixed`):
a PodCliqueSet created by upstream's operator or by an earlier syncagent keeps being applied
as it is, and only a new one follows the rules here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

ANY_ORDER = "CliqueStartupTypeAnyOrder"
EXPLICIT = "CliqueStartupTypeExplicit"
TRTLLM = "trtllm"


@dataclass(frozen=True, slots=True)
class Fixed:
    """A live PodCliqueSet's values that Grove makes immutable."""

    startup_type: str
    starts_after: Mapping[str, list[str]]
    min_available: Mapping[str, int]


def live_fixed(live: Mapping[str, Any] | None) -> Fixed | None:
    """The immutable values of a live PodCliqueSet (None when there is none)."""
    if not live:
        return None
    template = (live.get("spec") or {}).get("template") or {}
    starts: dict[str, list[str]] = {}
    minimum: dict[str, int] = {}
    for clique in template.get("cliques") or ():
        name, spec = str(clique.get("name")), clique.get("spec") or {}
        if spec.get("startsAfter"):
            starts[name] = [str(n) for n in spec["startsAfter"]]
        if "minAvailable" in spec:
            minimum[name] = int(spec["minAvailable"])
    startup = str(template.get("cliqueStartupType") or ANY_ORDER)
    return Fixed(startup_type=startup, starts_after=starts, min_available=minimum)


def starts_after(backend: str, *, base: str, multinode: bool) -> dict[str, list[str]]:
    """Clique name -> the cliques it starts after, for one component (upstream
    ``getCliqueStartupDependencies``, reached only for TensorRT-LLM multinode components)."""
    if backend == TRTLLM and multinode:
        return {f"{base}-ldr": [f"{base}-wkr"]}
    return {}


def startup_type(cliques: Sequence[Mapping[str, Any]]) -> str:
    explicit = any((c.get("spec") or {}).get("startsAfter") for c in cliques)
    return EXPLICIT if explicit else ANY_ORDER


def keep_fixed(cliques: list[dict[str, Any]], *, grouped: set[str], fixed: Fixed | None) -> str:
    """Put the live values back into ``cliques`` (``grouped``: the multinode cliques, whose
    ``minAvailable`` is rendered; a single-node clique's is the component's own field) and
    return the ``cliqueStartupType`` to apply."""
    if fixed is None:
        return startup_type(cliques)
    for clique in cliques:
        name, spec = clique["name"], clique["spec"]
        if name in grouped and name in fixed.min_available:
            spec["minAvailable"] = fixed.min_available[name]
        spec.pop("startsAfter", None)
        if name in fixed.starts_after:
            _insert_before_pod_spec(spec, "startsAfter", list(fixed.starts_after[name]))
    return fixed.startup_type


def _insert_before_pod_spec(spec: dict[str, Any], key: str, value: Any) -> None:
    """Keeps the key order of a rendered clique spec (``podSpec`` last) for readable output."""
    pod_spec = spec.pop("podSpec", None)
    spec[key] = value
    if pod_spec is not None:
        spec["podSpec"] = pod_spec

"""Which backend rewrites a component's pods, and the dispatch to it.

As upstream (``determineBackendFramework``): only worker-type components have a backend. The
backend named by the component's own ``main`` command line (``python... -m ... dynamo.<b>``)
wins; else the explicit ``backendFramework``; else none ("noop": nothing is changed, probes
included). A command line naming one backend while ``backendFramework`` names another is an
error, and so is a command line naming two backends without an explicit one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from syncagent.render.model import RenderError
from syncagent.render.multinode import sglang, trtllm, vllm
from syncagent.render.multinode.launch import Launch

NOOP = "noop"
WORKER_TYPES = frozenset({"worker", "prefill", "decode"})
# Upstream's pattern per backend; one order here so messages are stable.
_DETECT = {
    name: re.compile(rf"python[0-9.]*[\t\n\f\r ]+[^|&;]*-m[\t\n\f\r ]+[^|&;]*dynamo\.{name}[^|&;]*")
    for name in ("vllm", "sglang", "trtllm")
}


@dataclass(frozen=True, slots=True)
class Backend:
    """One backend's two rewrites: the ``main`` container, then the pod spec."""

    name: str
    update_container: Callable[[dict[str, Any], Launch], None]
    update_pod_spec: Callable[[dict[str, Any], dict[str, Any], Launch], None]


def _nothing_to_container(container: dict[str, Any], launch: Launch) -> None:
    return None


def _nothing_to_pod(spec: dict[str, Any], main: dict[str, Any], launch: Launch) -> None:
    return None


BACKENDS = {
    "sglang": Backend("sglang", sglang.update_container, sglang.update_pod_spec),
    "vllm": Backend("vllm", vllm.update_container, vllm.update_pod_spec),
    "trtllm": Backend("trtllm", trtllm.update_container, trtllm.update_pod_spec),
    NOOP: Backend(NOOP, _nothing_to_container, _nothing_to_pod),
}


def detect(command: Sequence[str], args: Sequence[str]) -> list[str]:
    """The backends a command line runs (``python3 -m dynamo.vllm`` -> ``["vllm"]``)."""
    line = " ".join([*command, *args])
    return [name for name, pattern in _DETECT.items() if pattern.search(line)]


def backend_name(
    component_type: str, command: Sequence[str], args: Sequence[str], explicit: str
) -> str:
    """The backend of a component (``noop`` for none); raises :class:`RenderError`."""
    if component_type not in WORKER_TYPES:
        return NOOP
    found = detect(command, args) if (command or args) else []
    if len(found) == 1:
        if explicit and explicit != found[0]:
            raise RenderError(
                f'failed to determine backend framework: backend framework mismatch: detected "{found[0]}" '
                f'from command but explicitly configured as "{explicit}"'
            )
        return found[0]
    if explicit:
        return explicit
    if len(found) > 1:
        raise RenderError(
            "failed to determine backend framework: multiple backend frameworks detected from "
            f"command: {', '.join(found)} in {' '.join([*command, *args])!r}"
        )
    return NOOP


def backend_for(name: str) -> Backend:
    try:
        return BACKENDS[name]
    except KeyError:
        raise RenderError(
            f"unsupported backend framework: {name} (valid values: vllm, sglang, trtllm)"
        ) from None

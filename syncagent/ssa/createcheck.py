"""Whether admission lets the create-only write through (docs/write-protocol.md §4).

Every create carries the create-only resourceVersion (``certain.CREATE_ONLY``), and admission
sees it: a validating webhook or policy may refuse it, which would fail every create. The agent
asks once, at start, with two server-side dry runs of a ConfigMap of its own (no object is
stored; the chart grants ConfigMap create and patch where the agent works, for the multinode
wait-for-leader ConfigMaps): the create-only apply, and, only when that is refused, the same
apply without the resourceVersion.
"""

from __future__ import annotations

from dataclasses import dataclass

from syncagent.kube.objects import ObjectRef
from syncagent.ssa.certain import targeted
from syncagent.ssa.errors import ApiError, PreconditionError
from syncagent.ssa.verbs import Verbs

PROBE_NAME = "syncagent-create-only-check"
PROBE_MANAGER = "syncagent/create-only-check"


@dataclass(frozen=True, slots=True)
class CreateOnlyCheck:
    """``admitted``: True when the create-only dry run passed (or met an object of that name:
    the precondition held); False when it was refused and the plain one passed (admission
    refuses create-only writes; ``refusal`` is the server's answer); None when both were
    refused (no rights, a webhook refusing dry runs): nothing is known."""

    admitted: bool | None
    subject: str
    refusal: str = ""


async def check_create_only(engine: Verbs, namespace: str) -> CreateOnlyCheck:
    """Dry-run a create-only apply of a ConfigMap in ``namespace`` (see the module doc)."""
    ref = ObjectRef("v1", "ConfigMap", PROBE_NAME, namespace)
    meta = {"name": ref.name, "namespace": namespace}
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}
    try:
        await engine.api.apply(
            ref, targeted(body, None), manager=PROBE_MANAGER, force=True, dry_run=True
        )
        return CreateOnlyCheck(True, ref.subject)
    except PreconditionError:
        return CreateOnlyCheck(True, ref.subject)  # the name exists: the precondition held
    except ApiError as err:
        refusal = err.detail
    try:
        await engine.api.apply(ref, body, manager=PROBE_MANAGER, force=True, dry_run=True)
    except ApiError:
        return CreateOnlyCheck(None, ref.subject, refusal)
    return CreateOnlyCheck(False, ref.subject, refusal)

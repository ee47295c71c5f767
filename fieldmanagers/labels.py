"""The ``manager`` label of the conflict, yield and fight metrics.

Other writers' field-manager names are chosen by whoever writes, so as metric labels they
would be unbounded: each is counted under its own name only when it is one of the agent's own
managers or a well-known writer of a Dynamo cluster, and under ``other`` otherwise (the logs
and Events keep the real name).
"""

from __future__ import annotations

from collections.abc import Iterable

from fieldmanagers.contract import FieldManager

OTHER = "other"
OWNER = "syncagent/owner"  # every syncagent/owner/<uid>: one label, not one per owner

# The writers a cluster running Dynamo usually has besides the agent: the Kubernetes
# controllers, kubectl's commands, Helm and the GitOps controllers, and the workload
# controllers whose objects the agent renders.
WELL_KNOWN: frozenset[str] = frozenset(
    {
        "kube-controller-manager",
        "kube-scheduler",
        "kubelet",
        "kubectl",
        "kubectl-client-side-apply",
        "kubectl-edit",
        "kubectl-patch",
        "kubectl-scale",
        "kubectl-label",
        "kubectl-annotate",
        "kubectl-rollout",
        "kubectl-set",
        "kubectl-create",
        "kubectl-replace",
        "helm",
        "argocd-controller",
        "argocd-application-controller",
        "kustomize-controller",
        "helm-controller",
        "lws",
        "disaggregatedset-controller",
        "grove-operator",
        "dynamo-operator",
        "manager",
    }
)


def metric_label(manager: str, *, ours: Iterable[FieldManager]) -> str:
    """``manager`` when the set above or ``ours`` (the agent's managers,
    ``Registry.field_managers``) names it, ``syncagent/owner`` for a per-owner manager, ``other``
    for anything else."""
    if manager in WELL_KNOWN or any(m.name == manager for m in ours):
        return manager
    if manager.startswith(OWNER + "/"):
        return OWNER
    return OTHER

"""Every kind the agent reads or writes, declared once: apiVersion, kind and resource (plural).

Renderers build manifests from these, programs look objects up by them, the watches and the
chart's RBAC rules name their resources, and ``plan`` lists them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Kind:
    api_version: str
    kind: str
    plural: str

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    @property
    def version(self) -> str:
        return self.api_version.rpartition("/")[2]

    def __str__(self) -> str:
        return self.kind


# Ours (nvidia.com): the graph, its components, and the checkpoints they may wait for.
DGD = Kind("nvidia.com/v1beta1", "DynamoGraphDeployment", "dynamographdeployments")
DCD = Kind("nvidia.com/v1beta1", "DynamoComponentDeployment", "dynamocomponentdeployments")
CHECKPOINT = Kind("nvidia.com/v1alpha1", "DynamoCheckpoint", "dynamocheckpoints")

# Workloads of the three pathways.
DEPLOYMENT = Kind("apps/v1", "Deployment", "deployments")
LEADER_WORKER_SET = Kind("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", "leaderworkersets")
DISAGGREGATED_SET = Kind("disaggregatedset.x-k8s.io/v1", "DisaggregatedSet", "disaggregatedsets")
POD_CLIQUE_SET = Kind("grove.io/v1alpha1", "PodCliqueSet", "podcliquesets")
POD_CLIQUE = Kind("grove.io/v1alpha1", "PodClique", "podcliques")
POD_CLIQUE_SCALING_GROUP = Kind(
    "grove.io/v1alpha1", "PodCliqueScalingGroup", "podcliquescalinggroups"
)

# Core and RBAC objects around them.
SERVICE = Kind("v1", "Service", "services")
SERVICE_ACCOUNT = Kind("v1", "ServiceAccount", "serviceaccounts")
ROLE = Kind("rbac.authorization.k8s.io/v1", "Role", "roles")
ROLE_BINDING = Kind("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings")
CONFIG_MAP = Kind("v1", "ConfigMap", "configmaps")
SECRET = Kind("v1", "Secret", "secrets")

"""Every kind the agent reads or writes, declared once as a :class:`Resource` (apiVersion,
kind, plural; all of them namespaced).

Renderers build manifests from these, programs look objects up by them, the watches and the
chart's RBAC rules name their resources, and ``plan`` lists them.
"""

from __future__ import annotations

from syncagent.rest.resource import Resource

# Ours (nvidia.com): the graph, its components, the checkpoints they may wait for and the
# scaling adapters autoscalers scale them through.
DGD = Resource.of("nvidia.com/v1beta1", "DynamoGraphDeployment", "dynamographdeployments")
DCD = Resource.of("nvidia.com/v1beta1", "DynamoComponentDeployment", "dynamocomponentdeployments")
CHECKPOINT = Resource.of("nvidia.com/v1alpha1", "DynamoCheckpoint", "dynamocheckpoints")
SCALING_ADAPTER = Resource.of(
    "nvidia.com/v1beta1",
    "DynamoGraphDeploymentScalingAdapter",
    "dynamographdeploymentscalingadapters",
)

# Workloads of the three pathways.
DEPLOYMENT = Resource.of("apps/v1", "Deployment", "deployments")
LEADER_WORKER_SET = Resource.of(
    "leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", "leaderworkersets"
)
DISAGGREGATED_SET = Resource.of(
    "disaggregatedset.x-k8s.io/v1", "DisaggregatedSet", "disaggregatedsets"
)
POD_CLIQUE_SET = Resource.of("grove.io/v1alpha1", "PodCliqueSet", "podcliquesets")
POD_CLIQUE = Resource.of("grove.io/v1alpha1", "PodClique", "podcliques")
POD_CLIQUE_SCALING_GROUP = Resource.of(
    "grove.io/v1alpha1", "PodCliqueScalingGroup", "podcliquescalinggroups"
)

# Core and RBAC objects around them.
SERVICE = Resource.of("v1", "Service", "services")
SERVICE_ACCOUNT = Resource.of("v1", "ServiceAccount", "serviceaccounts")
ROLE = Resource.of("rbac.authorization.k8s.io/v1", "Role", "roles")
ROLE_BINDING = Resource.of("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings")
CONFIG_MAP = Resource.of("v1", "ConfigMap", "configmaps")
SECRET = Resource.of("v1", "Secret", "secrets")

# Read only: what ``syncagent status`` shows beside the objects above (and the Events that
# name field fights).
REPLICA_SET = Resource.of("apps/v1", "ReplicaSet", "replicasets")
STATEFUL_SET = Resource.of("apps/v1", "StatefulSet", "statefulsets")
POD = Resource.of("v1", "Pod", "pods")
EVENT = Resource.of("v1", "Event", "events")

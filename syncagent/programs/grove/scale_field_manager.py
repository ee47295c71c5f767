"""`syncagent/grove-scale`: replicas written through the Grove ``scale`` subresources.

SSA cannot apply to a custom resource's ``/scale``, so these writes are JSON merge patches and
are exempt from the managedFields checks.
"""

from fieldmanagers.contract import FieldManager

MANAGER = FieldManager(
    name="syncagent/grove-scale",
    kinds=("PodClique", "PodCliqueScalingGroup"),
    paths=(".spec.replicas",),
    subresource="scale",
    operation="Update",
    exempt_from_checks=True,
)

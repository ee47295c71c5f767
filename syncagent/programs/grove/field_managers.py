"""`syncagent/grove`: the PodCliqueSet of a graph on the Grove pathway."""

from fieldmanagers.contract import FieldManager

MANAGER = FieldManager(
    name="syncagent/grove",
    kinds=("PodCliqueSet",),
    paths=(".spec*", ".metadata.labels*", ".metadata.annotations*"),
)

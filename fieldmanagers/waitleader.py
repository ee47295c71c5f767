"""`syncagent/wait-leader`: each graph's wait-for-leader ConfigMap (multinode vLLM ``mp`` workers)."""

from fieldmanagers.contract import FieldManager

MANAGER = FieldManager(
    name="syncagent/wait-leader",
    kinds=("ConfigMap",),
    paths=(".data*", ".metadata.labels*", ".metadata.annotations*"),
)

"""`syncagent/services`: component Services and the shared per-model Services."""

from fieldmanagers.contract import FieldManager

MANAGER = FieldManager(
    name="syncagent/services",
    kinds=("Service",),
    paths=(".spec*", ".metadata.labels*", ".metadata.annotations*"),
)

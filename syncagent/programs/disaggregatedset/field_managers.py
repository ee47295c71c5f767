"""`syncagent/disaggregatedset`: the DisaggregatedSet of a graph on the DS pathway."""

from fieldmanagers.contract import FieldManager

MANAGER = FieldManager(
    name="syncagent/disaggregatedset",
    kinds=("DisaggregatedSet",),
    paths=(".spec*", ".metadata.labels*", ".metadata.annotations*"),
)

"""`syncagent/identity`: each graph's discovery ServiceAccount, Role and RoleBinding."""

from fieldmanagers.contract import FieldManager

MANAGER = FieldManager(
    name="syncagent/identity",
    kinds=("ServiceAccount", "Role", "RoleBinding"),
    paths=(
        ".metadata.labels*",
        ".metadata.annotations*",
        ".rules*",
        ".roleRef*",
        ".subjects*",
        ".imagePullSecrets*",
    ),
)

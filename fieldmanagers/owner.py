"""`syncagent/owner/<uid>`: one co-owner's reference item on an object shared by several owners.

The shared model Service is applied by every graph that serves the model; each keeps its own
reference item under its own manager so that one owner's apply never erases another's.
"""

from fieldmanagers.contract import FieldManager

PREFIX = "syncagent/owner/"


def for_owner(uid: str) -> FieldManager:
    """The manager one co-owner (identified by its UID) applies its reference item with."""
    return FieldManager(
        name=f"{PREFIX}{uid}",
        kinds=("Service",),
        paths=(".metadata.ownerReferences*",),
    )


def is_owner_manager(name: str) -> bool:
    return name.startswith(PREFIX)

"""The server-side apply engine. Knows nothing about what it applies.

    engine = Engine(async_client)
    entry = await engine.apply(desired, ApplyOptions(manager="me", force=True), live=cached)
    entry.action  # "created" | "configured" | "unchanged"

Modules: ``engine`` (apply / plan / apply_all, get / list, delete, patch, takeover writes),
``options`` (the one options object of every apply verb), ``compare`` (dry run vs live),
``quirks`` (API-server normalisers), ``desired`` (refusal rules, digest, leaving paths out),
``managedfields`` and ``paths`` (decoding for blame and conflicts), ``fieldsets`` (raw fieldsV1
sets), ``takeover`` (adopting an old writer's fields, by policy), ``fights`` (the field-fight
detector), ``ownership`` (owner references), ``errors``, ``counter`` (requests by verb),
``cache``, ``api`` and ``resources`` (raw HTTP).
"""

from syncagent.kube.objects import ObjectRef, OwnerRef, controller_of
from syncagent.ssa.cache import ConvergenceCache
from syncagent.ssa.changeset import Action, ChangeSetEntry
from syncagent.ssa.counter import RequestCounter
from syncagent.ssa.desired import check_desired, digest, ref_of
from syncagent.ssa.engine import Engine
from syncagent.ssa.errors import (
    ApiError,
    ApplyAllError,
    Conflict,
    ConflictError,
    DesiredObjectError,
    DryRunBlockedError,
    ExistsError,
    FieldCause,
    ImmutableFieldError,
    InvalidError,
    NotFoundError,
    NotServedError,
    OwnershipError,
    PreconditionError,
    SsaError,
    UndeclaredFieldError,
)
from syncagent.ssa.managedfields import ManagerEntry, Owner, blame, decode
from syncagent.ssa.options import ABSENT, ApplyOptions, OnConflict
from syncagent.ssa.ownership import (
    OwnershipScheme,
    adoption_blockers,
    apply_controlled,
    control_refusal,
    is_adoptable,
    join,
    leave,
    owner_of,
    set_controller,
)
from syncagent.ssa.paths import FieldPath, readable, render

__all__ = [
    "ABSENT",
    "Action",
    "ApiError",
    "ApplyAllError",
    "ApplyOptions",
    "ChangeSetEntry",
    "Conflict",
    "ConflictError",
    "ConvergenceCache",
    "DesiredObjectError",
    "DryRunBlockedError",
    "Engine",
    "ExistsError",
    "FieldCause",
    "FieldPath",
    "ImmutableFieldError",
    "InvalidError",
    "ManagerEntry",
    "NotFoundError",
    "NotServedError",
    "ObjectRef",
    "OnConflict",
    "Owner",
    "OwnerRef",
    "OwnershipError",
    "OwnershipScheme",
    "PreconditionError",
    "RequestCounter",
    "SsaError",
    "UndeclaredFieldError",
    "adoption_blockers",
    "apply_controlled",
    "blame",
    "check_desired",
    "control_refusal",
    "controller_of",
    "decode",
    "digest",
    "is_adoptable",
    "join",
    "leave",
    "owner_of",
    "readable",
    "ref_of",
    "render",
    "set_controller",
]

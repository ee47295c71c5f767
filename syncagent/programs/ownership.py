"""How the programs' field managers play the ownership protocol of :mod:`syncagent.ssa.ownership`.

``syncagent/ownership`` holds every controller reference, ``syncagent/owner/<uid>`` one
co-owner's item on a shared object, and every ``syncagent/*`` manager is ours (its entries never
block an adoption); docs/design.md §9.
"""

from __future__ import annotations

import fieldmanagers
from fieldmanagers import owner, ownership
from syncagent.ssa import OwnershipScheme

SCHEME = OwnershipScheme(
    controller=ownership.MANAGER.name,
    owner_prefix=owner.PREFIX,
    ours_prefix=fieldmanagers.PREFIX,
)

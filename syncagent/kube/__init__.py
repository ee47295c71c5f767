"""Kubernetes vocabulary every layer shares: the kinds the agent touches, the references that
name objects and owners, and a thin typed view over an object as the API server returns it.

Pure values, no I/O, no imports of the rest of the product (the bottom layer of
docs/design.md). The view is in the spirit of kopf's ``bodies``: it never copies or validates
the wire dict, it answers the questions every reconcile asks (name, owner, controller,
deletion) the same way everywhere.
"""

from syncagent.kube.objects import (
    Body,
    Meta,
    ObjectRef,
    OwnerRef,
    being_deleted,
    body,
    controlled_by,
    controller_of,
)

__all__ = [
    "Body",
    "Meta",
    "ObjectRef",
    "OwnerRef",
    "being_deleted",
    "body",
    "controlled_by",
    "controller_of",
]

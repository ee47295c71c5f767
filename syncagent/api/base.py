"""The base of every API model: camelCase on the wire, snake_case in Python, sparse output."""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class KubeModel(BaseModel):
    """A Kubernetes-shaped model.

    Unknown fields are kept (``extra="allow"``) so upstream fields we do not interpret survive a
    round trip. ``to_dict()`` emits only fields that were set and never an explicit null, so a
    model built in code is sparse apply intent.
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
        validate_assignment=False,
    )

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready wire form: camelCase keys, set fields only, no nulls."""
        return self.model_dump(by_alias=True, exclude_unset=True, exclude_none=True, mode="json")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """Parse a wire-form dict (raises ``pydantic.ValidationError``)."""
        return cls.model_validate(data)


def mark_set(model: BaseModel, *names: str) -> None:
    """Count defaulted fields as set, so ``to_dict()`` emits them (apiVersion, kind)."""
    model.__pydantic_fields_set__.update(names)


class Crd:
    """CRD-schema facts of a field that the models do not enforce in Python.

    Python parsing stays lenient (bounds are checked by ``validation.py`` with readable
    messages); the CRD generator merges ``schema`` into the field's generated schema, or uses
    ``kube`` (a Kubernetes OpenAPI definition name) instead of the Python type.
    """

    __slots__ = ("kube", "schema")

    def __init__(
        self, extra: dict[str, Any] | None = None, *, kube: str | None = None, **schema: Any
    ) -> None:
        self.kube = kube
        self.schema = {**(extra or {}), **schema}

    def __repr__(self) -> str:
        return f"Crd(kube={self.kube!r}, schema={self.schema!r})"

"""Structured errors of the apply engine. Every message starts with ``Kind/namespace/name``.

The API server's answers are classified here, narrowly: a 409 is a field-manager conflict only
when its causes say so, and a 422 is an immutable-field error only when a cause says the field is
immutable.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from syncagent.ssa.paths import readable

_CONFLICT_WITH = re.compile(r'conflict with (?P<manager>"(?:[^"\\]|\\.)*")(?: using (?P<api>\S+))?')
# apimachinery ValidateImmutableField says "field is immutable"; CRD transition rules
# conventionally say "... is immutable" (kubebuilder's `self == oldSelf` examples).
_IMMUTABLE = re.compile(r"\bfield is immutable\b|\bis immutable\b", re.IGNORECASE)
_NO_DRY_RUN = re.compile(r"does not support dry run", re.IGNORECASE)
# structured-merge-diff's words for an applied field the served schema lacks (HTTP 500 to an
# apply, whatever fieldValidation says); the path is its own, e.g. ``.status.routing``.
_UNDECLARED = re.compile(r"(?P<path>\.[^\s:]+): field not declared in schema")


@dataclass(frozen=True, slots=True)
class Conflict:
    """One field another manager owns with a different value."""

    path: str
    manager: str
    api_version: str = ""

    @property
    def operation(self) -> str:
        # The server names the API version only for Update managers (printManager in
        # k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager).
        return "Update" if self.api_version else "Apply"

    def describe(self) -> str:
        using = f" (Update via {self.api_version})" if self.api_version else ""
        return f"{self.path} owned by {self.manager!r}{using}"


@dataclass(frozen=True, slots=True)
class FieldCause:
    """One cause of a rejected request: a field path, a reason and the server's message."""

    path: str
    reason: str
    message: str


class SsaError(Exception):
    """Base of every engine error; ``subject`` is ``Kind/namespace/name``."""

    def __init__(self, subject: str, detail: str) -> None:
        super().__init__(f"{subject}: {detail}")
        self.subject = subject
        self.detail = detail


class DesiredObjectError(SsaError):
    """The desired object is not sparse intent (server-owned fields, nulls, missing names)."""


class NotServedError(DesiredObjectError):
    """The server does not serve the object's kind (Go clients say "no matches for kind"): its
    CRD is missing, or was removed since the kind was last looked up."""


class OwnershipError(SsaError):
    """The object is controlled by someone else, or cannot be adopted or handed off."""


class ApiError(SsaError):
    """A request the API server refused; ``server_message`` is the server's own words."""

    def __init__(
        self, subject: str, detail: str, *, code: int, reason: str, server_message: str = ""
    ) -> None:
        super().__init__(subject, detail)
        self.code = code
        self.reason = reason
        self.server_message = server_message


class NotFoundError(ApiError):
    pass


class PreconditionError(ApiError):
    """A UID or resourceVersion precondition did not hold (the object changed or was replaced)."""


class ExistsError(PreconditionError):
    """A create-only write found an object of that name: nothing was written."""


class ConflictError(ApiError):
    """A non-forced apply would take fields other managers own."""

    def __init__(self, subject: str, conflicts: Sequence[Conflict], *, code: int = 409) -> None:
        listed = "; ".join(c.describe() for c in conflicts)
        detail = (
            f"apply conflicts with other field managers: {listed}; leave these fields out of "
            "the desired object, or apply with force to take them over"
        )
        super().__init__(subject, detail, code=code, reason="Conflict")
        self.conflicts = tuple(conflicts)


class InvalidError(ApiError):
    """The server rejected the object's content (HTTP 422)."""

    def __init__(
        self, subject: str, causes: Sequence[FieldCause], *, message: str, code: int = 422
    ) -> None:
        listed = "; ".join(f"{c.path}: {c.message}" for c in causes) or message
        super().__init__(
            subject, f"invalid: {listed}; fix these fields", code=code, reason="Invalid"
        )
        self.causes = tuple(causes)
        self.server_message = message


class ImmutableFieldError(InvalidError):
    """The change touches a field the server never lets change; delete and recreate instead."""

    def __init__(
        self, subject: str, causes: Sequence[FieldCause], *, message: str, code: int = 422
    ) -> None:
        super().__init__(subject, causes, message=message, code=code)
        self.fields = tuple(c.path for c in causes if _IMMUTABLE.search(c.message))
        self.args = (
            f"{subject}: immutable field(s) {', '.join(self.fields)} would change; keep the "
            "live value, or delete and recreate the object",
        )


class UndeclaredFieldError(ApiError):
    """The applied object sets fields the served schema does not declare (another version of
    the CRD is installed); ``fields`` are their paths, e.g. ``.status.routing``."""

    def __init__(self, subject: str, fields: Sequence[str], *, message: str, code: int) -> None:
        super().__init__(
            subject,
            f"{', '.join(fields)}: not declared in the served schema; install the CRD version "
            "that declares it, or leave it out",
            code=code,
            reason="UndeclaredField",
            server_message=message,
        )
        self.fields = tuple(fields)


class DryRunBlockedError(ApiError):
    """An admission webhook does not support dry run, so the engine cannot compare safely."""


def resource_not_served(code: int, status: Mapping[str, Any] | None) -> bool:
    """Whether a failure says the request's resource type is not served at all (a CRD that was
    removed), rather than that one object is missing.

    A missing object's 404 names it in ``details`` (``name``, ``kind``), and so does a missing
    namespace's; a path the server does not serve answers "the server could not find the
    requested resource" with empty details (or, from some handlers, no Status at all).
    """
    if code != 404:
        return False
    details = (status or {}).get("details") or {}
    return not details.get("name")


def error_from_status(subject: str, code: int, status: Mapping[str, Any] | None) -> ApiError:
    """Classify an API server failure (a ``Status`` body) into the narrowest error."""
    status = status or {}
    message = str(status.get("message") or f"HTTP {code}")
    reason = str(status.get("reason") or "")
    causes = list((status.get("details") or {}).get("causes") or [])
    if code == 409:
        conflicts = parse_conflicts(causes)
        if conflicts:
            return ConflictError(subject, conflicts, code=code)
        return PreconditionError(
            subject, f"{message}; re-read the object and retry", code=code, reason=reason
        )
    if code == 422 or reason == "Invalid":
        return _invalid(subject, code, message, causes)
    undeclared = [m.group("path") for m in _UNDECLARED.finditer(message)]
    if undeclared:
        return UndeclaredFieldError(subject, undeclared, message=message, code=code)
    if _NO_DRY_RUN.search(message):
        return DryRunBlockedError(
            subject,
            f"{message}; the webhook must declare sideEffects None or NoneOnDryRun",
            code=code,
            reason=reason,
        )
    if code == 404:
        return NotFoundError(subject, f"not found: {message}", code=code, reason=reason)
    return ApiError(
        subject,
        f"{message} (HTTP {code} {reason})",
        code=code,
        reason=reason,
        server_message=message,
    )


def _invalid(subject: str, code: int, message: str, raw: list[Any]) -> InvalidError:
    causes = [
        FieldCause(
            path=_dotted(str(c.get("field") or "")),
            reason=str(c.get("reason") or c.get("type") or ""),
            message=str(c.get("message") or ""),
        )
        for c in raw
    ]
    if any(_IMMUTABLE.search(c.message) for c in causes):
        return ImmutableFieldError(subject, causes, message=message, code=code)
    return InvalidError(subject, causes, message=message, code=code)


def _dotted(path: str) -> str:
    if not path or path.startswith(("[", ".")):
        return readable(path) if path else path
    return readable("." + path)


def parse_conflicts(causes: Sequence[Mapping[str, Any]]) -> list[Conflict]:
    """The field-manager conflicts among a 409's causes."""
    out = []
    for cause in causes:
        if cause.get("type", cause.get("reason")) != "FieldManagerConflict":
            continue
        match = _CONFLICT_WITH.search(str(cause.get("message") or ""))
        manager = json.loads(match.group("manager")) if match else "unknown"
        api_version = (match.group("api") or "").rstrip(":") if match else ""
        out.append(Conflict(readable(str(cause.get("field") or "")), manager, api_version))
    return out


class ApplyAllError(SsaError):
    """Some objects of an ``apply_all`` failed; the others were applied."""

    def __init__(self, entries: list[Any], errors: list[SsaError]) -> None:
        super().__init__(errors[0].subject, "; ".join(str(e) for e in errors))
        self.entries = entries
        self.errors = errors

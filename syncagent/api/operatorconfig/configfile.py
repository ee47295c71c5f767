"""An ``OperatorConfiguration`` file read as upstream's operator reads it: decoded strictly,
defaulted, validated; what syncagent leaves unused is named, never silently dropped."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pydantic
import yaml

from syncagent.api.operatorconfig.configdefaults import defaulted
from syncagent.api.operatorconfig.configtypes import (
    API_VERSION,
    KIND,
    OperatorConfiguration,
    unknown_fields,
)
from syncagent.api.operatorconfig.configusage import is_used
from syncagent.api.operatorconfig.configvalidation import validate_operator_config

HINT = "fix the file as upstream's OperatorConfiguration (docs/operatorconfig.md) and retry"


class OperatorConfigError(ValueError):
    """The file cannot be used; the message starts with the file and the field."""


@dataclass(frozen=True)
class LoadedConfig:
    config: OperatorConfiguration
    source: str | None = None  # None: no file, upstream's defaults
    unknown: list[str] = field(default_factory=list)  # keys upstream's types do not declare
    ignored: list[str] = field(default_factory=list)  # set in the file, unused by syncagent

    def notices(self) -> list[str]:
        """One line per unused field, each starting with the file (empty without a file)."""
        lines = []
        if self.unknown:
            lines.append(
                f"{self.source}: unknown fields {', '.join(self.unknown)}: upstream's "
                "OperatorConfiguration declares none of them; upstream drops them and so does "
                "syncagent"
            )
        if self.ignored:
            lines.append(
                f"{self.source}: syncagent does not use {', '.join(self.ignored)} "
                "(docs/operatorconfig.md says why)"
            )
        return lines


def default_config() -> LoadedConfig:
    """Upstream's defaults, as for an empty file (not validated: no file names MPI or RBAC)."""
    return LoadedConfig(config=defaulted(OperatorConfiguration()))


def load_operator_config(text: str, *, source: str) -> LoadedConfig:
    """Decode, default and validate ``text``; :class:`OperatorConfigError` when upstream would
    refuse it."""
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise OperatorConfigError(f"{source}: not YAML ({err}); {HINT}") from None
    raw = _without_nulls(raw if raw is not None else {})
    if not isinstance(raw, dict):
        raise OperatorConfigError(f"{source}: expected a mapping (an OperatorConfiguration)")
    _check_type(raw, source=source)
    try:
        parsed = OperatorConfiguration.model_validate(raw)
    except pydantic.ValidationError as err:
        raise OperatorConfigError(_decode_message(err, source=source)) from None
    config = defaulted(parsed)
    problems = validate_operator_config(config)
    if problems:
        listed = "; ".join(str(p) for p in problems)
        raise OperatorConfigError(f"{source}: {listed}; {HINT}")
    unknown = unknown_fields(parsed)
    ignored = [p for p in _leaf_paths(raw) if not is_used(p) and not _under_any(p, unknown)]
    return LoadedConfig(config=config, source=source, unknown=unknown, ignored=ignored)


def _check_type(raw: Mapping[str, Any], *, source: str) -> None:
    # Upstream's decoder fills a missing apiVersion or kind from the type it decodes into.
    for key, want in (("apiVersion", API_VERSION), ("kind", KIND)):
        if key in raw and raw[key] != want:
            raise OperatorConfigError(
                f"{source}: {key}: {raw[key]!r} is not {want!r}: give the OperatorConfiguration "
                "the Dynamo platform chart writes"
            )


def _decode_message(err: pydantic.ValidationError, *, source: str) -> str:
    lines = []
    for e in err.errors():
        path = ".".join(str(p) for p in e["loc"])
        lines.append(f"{path}: {e['msg']} (got {e.get('input')!r})")
    return f"{source}: {'; '.join(lines)}; {HINT}"


def _without_nulls(value: Any) -> Any:
    # Go's decoder leaves a field at its zero value for an explicit null.
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    return value


def _leaf_paths(raw: Mapping[str, Any], prefix: str = "") -> Iterator[str]:
    for key, value in raw.items():
        if not prefix and key in ("apiVersion", "kind"):
            continue
        if isinstance(value, dict) and value:
            yield from _leaf_paths(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}"


def _under_any(path: str, prefixes: list[str]) -> bool:
    return any(path == p or path.startswith(f"{p}.") for p in prefixes)

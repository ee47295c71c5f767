"""Upstream's operator configuration (``OperatorConfiguration``), read as upstream reads it.

It lives in ``api`` beside the other models of what syncagent is given: a pydantic model of an
upstream type, with upstream's defaulting and validation, and no I/O (the CLI reads the file)."""

from syncagent.api.operatorconfig.configfile import (
    LoadedConfig,
    OperatorConfigError,
    default_config,
    load_operator_config,
)
from syncagent.api.operatorconfig.configtypes import OperatorConfiguration

__all__ = [
    "LoadedConfig",
    "OperatorConfigError",
    "OperatorConfiguration",
    "default_config",
    "load_operator_config",
]

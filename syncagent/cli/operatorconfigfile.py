"""``--operator-config FILE``: upstream's ``OperatorConfiguration``, which ``run``, ``render``
and ``plan`` take alike (docs/operatorconfig.md). The flag is declared here once; reading the
file imports the model only when a command runs, so ``--help`` stays fast."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from syncagent.api.operatorconfig import LoadedConfig
    from syncagent.render import Infrastructure

HELP = (
    "upstream's OperatorConfiguration file (operator.config.dynamo.nvidia.com/v1alpha1, as the "
    "Dynamo platform chart writes it), defaulted and validated as upstream does; fields "
    "syncagent does not use are named (default: upstream's defaults)"
)


def add_operator_config_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--operator-config", metavar="FILE", default=None, help=HELP)


def read_operator_config(path: str | None) -> LoadedConfig:
    """The configuration at ``path`` (upstream's defaults for ``None``); UserError naming the
    file and field when upstream would refuse it."""
    from syncagent.api.load import LoadError
    from syncagent.api.operatorconfig import (
        OperatorConfigError,
        default_config,
        load_operator_config,
    )
    from syncagent.cli.errors import UserError
    from syncagent.cli.manifestfile import read_input

    if path is None:
        return default_config()
    try:
        return load_operator_config(read_input(path), source=path)
    except (LoadError, OperatorConfigError) as err:
        raise UserError(str(err)) from None


def offline_operator_config(path: str | None) -> LoadedConfig:
    """As :func:`read_operator_config`, naming unused fields on stderr (offline commands)."""
    loaded = read_operator_config(path)
    for line in loaded.notices():
        print(f"warning: {line}", file=sys.stderr)
    return loaded


def discovery_backend(flag: str | None, loaded: LoadedConfig) -> str:
    """``--discovery-backend`` when given, else the configuration's ``discovery.backend``."""
    return flag if flag is not None else loaded.config.discovery.backend


def infrastructure_of(loaded: LoadedConfig) -> Infrastructure:
    """The configuration's ``infrastructure`` addresses, as the renderer takes them."""
    from syncagent.render import Infrastructure

    infra = loaded.config.infrastructure
    return Infrastructure(
        nats_address=infra.nats_address,
        etcd_address=infra.etcd_address,
        model_express_url=infra.model_express_url,
        prometheus_endpoint=infra.prometheus_endpoint,
    )

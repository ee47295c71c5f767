"""``syncagent run``'s shard flags, read into :class:`~syncagent.runtime.shard.ShardSettings`."""

from __future__ import annotations

import argparse
from typing import Any

from syncagent.cli.errors import UserError
from syncagent.runtime.shard import ShardSettings


def add_shard_arguments(parser: Any) -> None:
    parser.add_argument(
        "--shard-name",
        default="",
        metavar="NAME",
        help="this agent is shard NAME: its Lease is <leader-election-id>-NAME (default: not "
        "sharded)",
    )
    parser.add_argument(
        "--shard-selector",
        default="",
        metavar="SELECTOR",
        help="reconcile only graphs whose labels match this label selector (with "
        "--shard-name; give every shard a disjoint one)",
    )


def shard_settings(args: argparse.Namespace) -> ShardSettings:
    try:
        return ShardSettings(name=args.shard_name, selector=args.shard_selector)
    except ValueError as err:
        raise UserError(str(err)) from None

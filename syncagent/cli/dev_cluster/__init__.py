"""``syncagent dev-cluster up|down|env``: a real local cluster for trying syncagent out."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from syncagent.cli.lazy import lazy
from syncagent.devcluster import build, versions
from syncagent.devcluster.kwok import DEFAULT_NODES

if TYPE_CHECKING:
    from syncagent.programs.registry import Registry


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], programs: Registry) -> None:
    parser = sub.add_parser(
        "dev-cluster",
        help="start, stop or locate a local cluster with every CRD syncagent uses",
        description=(
            "A local cluster on loopback, built from pinned Go modules and cached in "
            f"{build.cache_root()}. By default a simulated full cluster: etcd, kube-apiserver, "
            "kube-controller-manager with all its controllers, kube-scheduler, kwok GPU nodes "
            "whose pods become Running and Ready without running containers, and the real "
            "LeaderWorkerSet manager (LWS and DisaggregatedSet controllers, webhooks), and the "
            f"real Grove operator {versions.GROVE} when its source tarball is available "
            f"({versions.GROVE_SOURCE} in $SYNCAGENT_REFERENCE/source, default "
            "../shared/reference next to the checkout, or --grove-source); without it, Grove's "
            "CRDs only. With "
            "--bare, only etcd + kube-apiserver + kube-controller-manager (garbage collector "
            "and namespace controllers). Honours KUBEBUILDER_ASSETS."
        ),
    )
    # --name goes before or after the action; after it, it wins.
    parser.add_argument("--name", default="default", help="which local cluster (default: default)")
    named = argparse.ArgumentParser(add_help=False)
    named.add_argument("--name", default=argparse.SUPPRESS, help="which local cluster")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    up = actions.add_parser(
        "up", parents=[named], help="build if needed, start, and print the server version"
    )
    _up_flags(up)
    up.set_defaults(func=lazy(f"{__name__}.lifecycle", "up"))
    down = actions.add_parser("down", parents=[named], help="stop the cluster and delete its data")
    down.set_defaults(func=lazy(f"{__name__}.lifecycle", "down"))
    env = actions.add_parser(
        "env", parents=[named], help="print the shell line that points kubectl at it"
    )
    env.set_defaults(func=lazy(f"{__name__}.lifecycle", "env"))


def _up_flags(up: argparse.ArgumentParser) -> None:
    up.add_argument(
        "--bare",
        action="store_true",
        help="only etcd, kube-apiserver and the garbage collector and namespace controllers",
    )
    up.add_argument(
        "--nodes",
        type=int,
        default=None,
        metavar="N",
        help=f"simulated GPU nodes (default {DEFAULT_NODES}; not with --bare)",
    )
    up.add_argument(
        "--lws-version",
        default=versions.DEFAULT_LWS,
        choices=versions.LWS_VERSIONS,
        help=(
            "which LeaderWorkerSet/DisaggregatedSet CRDs to install (and manager to run; only "
            f"{', '.join(versions.LWS_MANAGER_VERSIONS)} has one, other versions need --bare)"
        ),
    )
    up.add_argument(
        "--grove-source",
        type=Path,
        default=None,
        metavar="TARBALL",
        help=(
            f"the Grove {versions.GROVE} source tarball to build and run the Grove operator from "
            f"(default: {versions.GROVE_SOURCE} in $SYNCAGENT_REFERENCE/source when it is there; "
            "not with --bare)"
        ),
    )
    up.add_argument(
        "--crd",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="an extra CRD file to install (repeatable)",
    )

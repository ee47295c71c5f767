"""Flags more than one command takes, declared once: ``--capability``, the connection flags
of the inspect commands (kubectl's), and durations.

Only argparse lives here; what a flag means belongs to the layer that uses it
(:mod:`syncagent.programs.capabilities` folds the capability settings).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from syncagent.programs.capabilities import Capability, Setting

if TYPE_CHECKING:
    from syncagent.inspect.session import Connection

_DURATION = re.compile(r"^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s)?$")


def parse_capability(value: str, *, names: Sequence[str]) -> tuple[str, Setting]:
    """``grove=false`` -> ``("grove", Setting.FALSE)`` for one of ``names`` (the registry's
    capabilities); an argparse ``type=`` (errors = usage)."""
    name, sep, raw = value.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(
            f"--capability {value!r}: expected NAME=auto|true|false, NAME one of {', '.join(names)}"
        )
    if name not in names:
        raise argparse.ArgumentTypeError(
            f"--capability {value!r}: unknown capability {name!r}; use one of {', '.join(names)}"
        )
    try:
        setting = Setting(raw.lower())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--capability {value!r}: unknown value {raw!r}; use auto, true or false"
        ) from None
    return name, setting


def add_capability_argument(
    parser: argparse.ArgumentParser, *, declared: Sequence[Capability], offline: bool = False
) -> None:
    """The one ``--capability`` flag every command takes, for the ``declared`` capabilities
    (``Registry.capabilities``, docs/routing.md §1)."""
    choices = "true|false" if offline else "auto|true|false"
    default = "true" if offline else "auto"
    names = [c.name for c in declared]
    needs = [f"{n.name}=false also switches {c.name} off" for c in declared for n in c.needs]

    def parse(value: str) -> tuple[str, Setting]:
        return parse_capability(value, names=names)

    parser.add_argument(
        "--capability",
        dest="capability",
        action="append",
        type=parse,
        default=[],
        metavar=f"NAME={choices}",
        help=(
            f"switch a pathway capability ({', '.join(names)}); repeatable; default {default}"
            + ("" if offline else ": auto detects it, false switches it off, true requires it")
            + "".join(f"; {text}" for text in needs)
        ),
    )


def duration(text: str) -> float:
    """``90``, ``30s``, ``10m``, ``1h30m`` -> seconds (argparse type)."""
    try:
        value = float(text)
    except ValueError:
        match = _DURATION.match(text.strip())
        if not text.strip() or match is None:
            raise argparse.ArgumentTypeError(
                f"{text!r}: expected a duration such as 30s, 10m or 1h"
            ) from None
        h, m, s = (float(g) if g else 0.0 for g in match.groups())
        value = h * 3600 + m * 60 + s
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: the duration must be positive")
    return value


def positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number of at least 1")
    return int(text)


def add_connection_arguments(parser: argparse.ArgumentParser, *, impersonate: bool) -> None:
    parser.add_argument("--kubeconfig", metavar="FILE", help="kubeconfig file")
    parser.add_argument("--context", metavar="NAME", help="kubeconfig context")
    parser.add_argument(
        "-n",
        "--namespace",
        metavar="NS",
        help="namespace (default: the manifest's, else the kubeconfig context's, else default)",
    )
    if impersonate:
        parser.add_argument(
            "--as",
            dest="as_user",
            metavar="USER",
            help="impersonate this user, e.g. system:serviceaccount:NS:NAME (the agent's "
            "ServiceAccount), so RBAC and admission behave as they will for the agent",
        )
        parser.add_argument(
            "--as-group",
            dest="as_group",
            action="append",
            default=[],
            metavar="GROUP",
            help="impersonate this group too; repeatable",
        )


def connection(args: argparse.Namespace) -> Connection:
    """The connection flags of ``args`` (see :func:`add_connection_arguments`)."""
    # Imported here: the offline commands share this module and must start fast.
    from syncagent.inspect.session import Connection

    return Connection(
        kubeconfig=args.kubeconfig,
        context=args.context,
        namespace=args.namespace,
        as_user=getattr(args, "as_user", None),
        as_groups=tuple(getattr(args, "as_group", None) or ()),
    )

"""``syncagent run``: the agent. Watches graphs and keeps them deployed until SIGTERM.

Flag names are an interface (the Helm chart passes them); each is declared once, on its
settings field (:mod:`syncagent.cli.run.settings`). Registering the command imports none of the
agent: ``syncagent render`` and ``--help`` stay fast.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from syncagent.cli.flags import add_capability_argument
from syncagent.cli.run.settings import GROUPS, add_flags, agent_settings

if TYPE_CHECKING:
    from syncagent.programs.registry import Registry

DESCRIPTION = """\
Run the agent: watch DynamoGraphDeployments and DynamoComponentDeployments and keep their
workloads (DynamoComponentDeployments, Deployments, LeaderWorkerSets, Services, discovery
ServiceAccounts/Roles/RoleBindings, wait-for-leader ConfigMaps) applied through server-side apply. What other writers add
beside the agent's fields stays theirs; a writer that keeps taking fields back is named in a
FieldFight event and left alone for a backoff (--fight-*; docs/ownership.md). Logs are JSON lines
on stderr. SIGTERM stops it gracefully (reconciles in flight finish, the Lease is released)."""


def register(subparsers: Any, programs: Registry) -> None:
    p = subparsers.add_parser(
        "run",
        help="run the agent (watch graphs and keep them deployed)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    for name, cls in GROUPS:
        add_flags(p, cls)
        if name == "watches":  # --capability comes next in --help, as it always did
            add_capability_argument(p, declared=programs.capabilities())
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported here, not at the top: the agent pulls in the whole runtime and every program.
    from syncagent.cli.run.agent import serve

    return serve(agent_settings(args), programs=args.programs)

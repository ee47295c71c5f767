"""``syncagent completion``: what it does (flags: ``syncagent.cli.completion``)."""

from __future__ import annotations

import argparse
import sys

import shtab

from syncagent.cli.main import build_parser


def run(args: argparse.Namespace) -> int:
    sys.stdout.write(shtab.complete(build_parser(args.programs), shell=args.shell))
    return 0

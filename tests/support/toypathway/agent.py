"""The composition root of a syncagent with the toy pathway: the real registry plus one line.

``python -m tests.support.toypathway.agent <command> …`` is ``syncagent <command> …`` over
:data:`PROGRAMS` (the cluster test runs ``run`` this way, ``render`` in process).
"""

from __future__ import annotations

import sys

from syncagent.cli.main import run_cli
from syncagent.cli.pathways import PROGRAMS as BUILT_IN
from syncagent.programs.registry import Registry
from tests.support.toypathway.program import toy_program

# The one registry line: first in precedence, so an opted-in graph is the toy's.
PROGRAMS = Registry((toy_program(), *BUILT_IN.programs))

if __name__ == "__main__":
    sys.exit(run_cli(sys.argv[1:], programs=PROGRAMS))

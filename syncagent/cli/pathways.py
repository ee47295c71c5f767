"""The pathways this agent runs, in routing precedence order, the fallback last.

The composition root: ``syncagent run``, ``plan``, ``render`` and the other commands pass this
registry down; nothing below the CLI holds one (docs/design.md §3). Adding a pathway is its package
plus one line here.
"""

from __future__ import annotations

from syncagent.programs.component import component_program
from syncagent.programs.disaggregatedset import disaggregatedset_program
from syncagent.programs.grove import grove_program
from syncagent.programs.registry import Registry

PROGRAMS = Registry((grove_program(), disaggregatedset_program(), component_program()))

"""A fourth pathway for tests only: its whole package (issue 28 item 1).

Everything the agent needs of it is declared here: its kind and CRD (``kind.py``), its field
manager, capability, routing, renderer and watches (``program.py``), its reconcile
(``reconcile.py``). The
one line that plugs it in is :data:`tests.support.toypathway.agent.PROGRAMS`; no file of the
product names it.
"""

from tests.support.toypathway.kind import CRD, OPT_IN, TOY
from tests.support.toypathway.program import CAPABILITY, MANAGER, ToyFunctions, toy_program

__all__ = ["CAPABILITY", "CRD", "MANAGER", "OPT_IN", "TOY", "ToyFunctions", "toy_program"]

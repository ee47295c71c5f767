"""The outer reconcilers (design.md §3) and their wiring into a manager."""

from syncagent.controller.reconcilers import Reconcilers
from syncagent.controller.setup import ControllerSettings, setup

__all__ = ["ControllerSettings", "Reconcilers", "setup"]

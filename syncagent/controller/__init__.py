"""The outer reconcilers (docs/design.md §8) and their wiring into a manager."""

from syncagent.controller.reconcilers import Reconcilers
from syncagent.controller.setup import ControllerSettings, setup

__all__ = ["ControllerSettings", "Reconcilers", "setup"]

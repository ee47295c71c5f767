"""Shared logic of the laptop and debugging tools (``plan``, ``blame``, ``conflicts``,
``managers``, ``status``); the CLI modules only parse flags and print.

- ``planapplier``: the applier of ``plan``: it only dry-runs, composes successive dry runs of
  one object and records every apply and delete the programs ask for.
- ``planner``: runs the agent's own programs for a graph against that applier.
- ``report``: the plan as rows (human text and the stable JSON of ``plan -o json``).
- ``diff``: live vs dry-run result as a readable diff (server-set fields left out).
- ``fieldpaths``: readable field paths resolved against objects.
- ``blame``, ``conflicts``, ``managers``: the other three tools; ``fights``: the field fights
  the agent declared, read back from its ``FieldFight`` Events (for ``conflicts``).
- What a takeover adopts, and the takeover targets per kind, come from
  ``syncagent.programs.takeover`` (shared with the programs; docs/ownership.md).
- ``statustree`` (pure: objects -> tree nodes), ``readiness`` (pure: ready or why not),
  ``statusjson`` (the stable ``-o json`` document), ``statusread`` (the lists and watches):
  ``syncagent status`` (docs/status.md).
- ``kinds``, ``live``, ``session``: KIND/NAME resolution, reading one object, the client
  (``--as`` impersonation) and the one-line errors.
"""

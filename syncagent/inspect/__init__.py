"""What more than one of the inspect commands (``plan``, ``blame``, ``conflicts``,
``managers``, ``status``) uses; what only one uses lives in its package under ``cli/``.

- ``planapplier``: the applier of ``plan``: it only dry-runs, composes successive dry runs of
  one object and records every apply and delete the programs ask for.
- ``planner``: runs the agent's own programs for a graph against that applier.
- ``report``: the plan as rows (human text and the stable JSON of ``plan -o json``).
- ``diff``: live vs dry-run result as a readable diff (server-set fields left out).
- ``history``: ``blame --history``'s report of the agent's ownership history.
- What a takeover adopts, and the takeover targets per kind, come from
  ``syncagent.programs.upstream_takeover`` (shared with the programs; docs/ownership.md).
- ``kinds``, ``live``, ``session``: KIND/NAME resolution, reading one object, the client
  (``--as`` impersonation) and the one-line errors.
"""

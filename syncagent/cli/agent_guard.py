"""The data of the chart's agent guard (``agent-guard.yaml``), as CEL literals, from the same
declarations the chart's RBAC comes from: the kinds the pathways apply and the subresources
their field managers patch (``Registry.written``, ``Registry.subresource_writes``), the kinds
that control what they apply (``registry.CONTROLLERS``), and each graph's discovery identity
(its Role's rules and its names, ``render.identity``), and the namespaces the agent leaves
alone unless named (``controller.setup.SYSTEM_NAMESPACES``), and the name of the dry run the
agent sends when it starts leading (``ssa.createcheck.PROBE_NAME``). ``cli.generate`` writes the template;
a kind a new pathway writes reaches the guard and the RBAC together.
"""

from __future__ import annotations

import json
from typing import Any

from syncagent.controller.setup import SYSTEM_NAMESPACES
from syncagent.programs.registry import CONTROLLERS, Registry
from syncagent.render.identity import RULES
from syncagent.render.naming import (
    discovery_role,
    discovery_role_binding,
    discovery_service_account,
)
from syncagent.rest.resource import Resource
from syncagent.ssa.createcheck import PROBE_NAME


def target(kind: Resource, subresource: str = "") -> str:
    """How the guard names a request's resource: ``group/plural[/subresource]`` (``/events``
    for the core group)."""
    return f"{kind.group}/{kind.plural}" + (f"/{subresource}" if subresource else "")


def identity_names() -> dict[str, str]:
    """The discovery identity's names as suffixes: the ServiceAccount's after the parent's
    name, the Role's and the RoleBinding's after the ServiceAccount's."""
    account = discovery_service_account("")
    role, binding = discovery_role(""), discovery_role_binding("")
    # The guard checks role == account + tail: true of every name only if they extend it.
    if not (role.startswith(account) and binding.startswith(account)):
        raise ValueError(f"discovery names {role!r}, {binding!r} do not extend {account!r}")
    return {
        "account": account,
        "role": role.removeprefix(account),
        "binding": binding.removeprefix(account),
    }


def guard_data(programs: Registry) -> dict[str, Any]:
    """Each value the template includes, by the name of its ``define``."""
    return {
        "applied": [target(k) for k in programs.written()],
        "subresources": [target(k, sub) for k, sub in programs.subresource_writes()],
        "graph": target(CONTROLLERS[0]),
        "controllerGroup": CONTROLLERS[0].group,
        "controllers": [k.kind for k in CONTROLLERS],
        "roleRules": [
            {key: rule[key] for key in ("apiGroups", "resources", "verbs")} for rule in RULES
        ],
        "names": identity_names(),
        "systemNamespaces": list(SYSTEM_NAMESPACES),
        "createOnlyProbe": PROBE_NAME,
    }


def template(programs: Registry, header: str) -> str:
    """``_agent_guard.tpl``: one ``syncagent.guard.<name>`` define per value, each a CEL
    literal (JSON's lists, maps and strings are CEL's)."""
    lines = [header.rstrip("\n")]
    for name, value in guard_data(programs).items():
        lines.append(f'{{{{- define "syncagent.guard.{name}" -}}}}')
        lines.append(json.dumps(value))
        lines.append("{{- end }}")
    return "\n".join(lines) + "\n"

"""Where launch flags go in a container command (upstream's ``injectFlagsIntoContainerCommand``).

- A Python interpreter as ``command[0]``: the flags are appended to ``args``; when the node rank
  is a shell-only expression (Grove's ``$((GROVE_PCLQ_POD_INDEX + 1))``) the whole command is
  rewritten to ``sh -c "exec <command> <args> <flags>"`` so a shell evaluates it. Plain
  ``$(VAR)`` references need no shell: the kubelet expands them in ``command``/``args``.
- Anything else (``sh -c "python3 -m dynamo.sglang ..."``): the flags are inserted right after
  the first ``python... <framework>...`` word run of the first arg that has one, before any
  ``|``, ``&`` or ``;``.
"""

from __future__ import annotations

import re
from typing import Any

from syncagent.render.multinode.shell import fields, is_python_command, quote_for_bash_c

# Go's \s is [\t\n\f\r ] and its $ (no multiline flag) is the end of the text only.
_WS = r"[\t\n\f\r ]"


def inject_flags(
    container: dict[str, Any], flags: str, *, needs_shell: bool, framework: str
) -> None:
    """Put ``flags`` into ``container``'s command line (in place)."""
    command = list(container.get("command") or [])
    args = list(container.get("args") or [])
    if command and is_python_command(command[0]):
        if needs_shell:
            line = " ".join(quote_for_bash_c(t) for t in command)
            if args:
                line += " " + " ".join(quote_for_bash_c(a) for a in args)
            container["command"] = ["sh", "-c"]
            container["args"] = [f"exec {line} {flags}"]
        else:
            container["args"] = [*args, *fields(flags)]
        return
    for i, arg in enumerate(args):
        changed = inject_into_python_command(arg, flags, framework)
        if changed != arg:
            args[i] = changed
            container["args"] = args
            return


def inject_into_python_command(arg: str, flags: str, framework: str) -> str:
    """``arg`` with ``flags`` after every ``python... <framework>...`` run of words."""
    pattern = re.compile(rf"(python[0-9.]*{_WS}+[^|&;]*{framework}[^|&;]*?)({_WS}|\Z|[|&;])")
    return pattern.sub(lambda m: f"{m.group(1)} {flags}{m.group(2)}", arg)

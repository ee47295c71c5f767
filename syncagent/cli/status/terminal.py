"""The terminal rendering of ``syncagent status``, with rich (tree, colour, live redraw).

rich decides colour as the tools people know do: none when the output is not a terminal, none
when ``NO_COLOR`` is set; its ``Live`` display redraws in place (cursor moved back over the
previous frame, no screen clear), so a redraw does not flicker.
"""

from __future__ import annotations

import sys
from types import TracebackType

from rich.console import Console, RenderableType
from rich.live import Live
from rich.text import Text
from rich.tree import Tree

from syncagent.cli.status.treenodes import Node

UNWRAPPED = 4096
MARK = {True: ("✔", "green"), False: ("✘", "bold red"), None: ("•", "dim")}


def console() -> Console:
    out = Console(file=sys.stdout, highlight=False)
    if not out.is_terminal:
        # A pipe or file has no width: never wrap a line (kubectl's habit), grep sees it whole.
        out = Console(file=sys.stdout, highlight=False, width=UNWRAPPED)
    return out


def render(root: Node) -> Tree:
    tree = Tree(label(root), guide_style="dim")
    _add(tree, root.children)
    return tree


def _add(branch: Tree, nodes: list[Node]) -> None:
    for node in nodes:
        _add(branch.add(label(node)), node.children)


def label(node: Node) -> Text:
    mark, style = MARK[node.ready]
    text = Text.assemble((mark, style), " ", (node.ref, "bold"))
    if node.state:
        text.append(f"  {node.state}", style="cyan" if node.ready else "yellow")
    who = [f"controller {node.controller}"] if node.controller else []
    if node.managers:
        who.append("managers " + ", ".join(dict.fromkeys(m.manager for m in node.managers)))
    if who:
        text.append("\n  " + "; ".join(who), style="dim")
    if node.reason:
        text.append(f"\n  why: {node.reason}", style="red")
    for ev in node.events:
        times = f" x{ev.count}" if ev.count > 1 else ""
        style = "yellow" if ev.type == "Warning" else "dim"
        text.append(f"\n  event {ev.type} {ev.reason}{times}: {ev.message}", style=style)
    return text


def missing(subject: str) -> Text:
    return Text(f"{subject}: not found; waiting for it to be created", style="yellow")


class Screen:
    """Where ``-w`` shows each frame: in place on a terminal (text), appended otherwise."""

    def __init__(self, out: Console, *, live: bool) -> None:
        self.console = out
        self._live = (
            Live(console=out, auto_refresh=False, transient=False, redirect_stdout=False)
            if live and out.is_terminal
            else None
        )

    def __enter__(self) -> Screen:
        if self._live is not None:
            self._live.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._live is not None:
            self._live.__exit__(exc_type, exc, tb)

    def show(self, frame: RenderableType) -> None:
        if self._live is not None:
            self._live.update(frame, refresh=True)
        else:
            self.console.print(frame)
            self.console.file.flush()

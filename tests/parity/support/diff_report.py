"""What a failing differential run prints: every divergence grouped by kind and path (a path's
component-specific parts generalised), how many graphs show it and an example of each value;
then each failing graph with its divergences and YAML. Pure: no I/O."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from tests.parity.support.diff_run import CaseResult
from tests.parity.support.differential import Divergence, show
from tests.support.parity_differences import Difference

# How many failing graphs are printed in full after the grouped summary.
GRAPHS_SHOWN = 5
_CLIQUE = re.compile(r"cliques\[name=[^\]]*?(-ldr|-wkr)?\]")


@dataclass(slots=True)
class Group:
    kind: str
    path: str
    cases: set[str] = field(default_factory=set)
    example: Divergence | None = None
    error: str | None = None


def general_path(divergence: Divergence) -> str:
    """The path with list items named by a component generalised, container and env names kept
    (they are the same in every graph): ``cliques[name=decode-ldr]`` -> ``cliques[name=*-ldr]``."""
    return _CLIQUE.sub(lambda m: f"cliques[name=*{m[1] or ''}]", divergence.path)


def group(results: Sequence[CaseResult]) -> list[Group]:
    groups: dict[tuple[str, str], Group] = {}
    for result in results:
        pathway = result.case.pathway.value
        for divergence in result.divergences:
            key = (f"{pathway}: {divergence.kind}", general_path(divergence))
            entry = groups.setdefault(key, Group(*key))
            entry.cases.add(result.case.id)
            entry.example = entry.example or divergence
        if result.error:
            key = (f"{pathway}: (graph)", "error")
            entry = groups.setdefault(key, Group(*key))
            entry.cases.add(result.case.id)
            entry.error = entry.error or result.error
    return sorted(groups.values(), key=lambda g: (g.kind, g.path))


def failure_message(
    failed: Sequence[CaseResult], *, seed: int | None = None, total: int | None = None
) -> str:
    head = f"{len(failed)} of {total} cases" if total is not None else f"{len(failed)} case(s)"
    lines = [f"{head} differ from upstream's own rendering, beyond docs/parity.md:"]
    if seed is not None:
        lines.append(f"(generated graphs: reproduce with SYNCAGENT_DIFF_SEED={seed})")
    lines.append("")
    for entry in group(failed):
        lines.append(f"[{len(entry.cases)} case(s)] {entry.kind}: {entry.path}")
        if entry.example is not None:
            example = entry.example
            lines.append(
                f"    e.g. {example.name}: upstream={show(example.upstream)} "
                f"syncagent={show(example.ours)}"
            )
        if entry.error is not None:
            lines.append(f"    e.g. {entry.error}")
        lines.append(f"    in: {', '.join(sorted(entry.cases)[:4])}")
    for result in failed[:GRAPHS_SHOWN]:
        lines += ["", result.report(), "  graph:", _indent(result.case.graph_yaml())]
    return "\n".join(lines)


def _indent(text: str) -> str:
    return "\n".join(f"    {line}" for line in text.splitlines())


def stale_differences(listed: Sequence[Difference], results: Sequence[CaseResult]) -> list[str]:
    """Differences naming ``diff/`` cases that edited nothing in any case of the run."""
    stale = []
    for difference in listed:
        named = [r for r in results if difference.applies_to(r.case.id)]
        if named and sum(r.edits.get(difference.id, 0) for r in named) == 0:
            stale.append(f"{difference.id} ({difference.title})")
    return stale

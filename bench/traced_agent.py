"""``syncagent`` under tracemalloc: SIGUSR1 writes the largest live allocations to the file
named by ``$SYNCAGENT_TRACE_OUT`` (used by ``memory.py``; a bench tool, not part of the agent).

    python3 bench/traced_agent.py run ...   # the same arguments as ``syncagent``
"""

from __future__ import annotations

import os
import signal
import sys
import tracemalloc
from pathlib import Path
from types import FrameType

FRAMES = 4
TOP = 25


def _dump(_signum: int, _frame: FrameType | None) -> None:
    snapshot = tracemalloc.take_snapshot().filter_traces(
        [tracemalloc.Filter(False, tracemalloc.__file__)]
    )
    lines = [f"traced: {sum(s.size for s in snapshot.statistics('filename')) / 1e6:.1f} MB"]
    for group in ("filename", "lineno"):
        lines.append(f"-- by {group}")
        for stat in snapshot.statistics(group)[:TOP]:
            frame = stat.traceback[0]
            lines.append(
                f"{stat.size / 1e6:8.2f} MB {stat.count:8d} {frame.filename}:{frame.lineno}"
            )
    lines.append("-- by traceback")
    for stat in snapshot.statistics("traceback")[:TOP]:
        lines.append(f"{stat.size / 1e6:8.2f} MB {stat.count:8d}")
        lines += [f"      {f.filename}:{f.lineno}" for f in stat.traceback]
    Path(os.environ["SYNCAGENT_TRACE_OUT"]).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    tracemalloc.start(FRAMES)
    signal.signal(signal.SIGUSR1, _dump)
    from syncagent.cli.main import main

    sys.exit(main(sys.argv[1:]))

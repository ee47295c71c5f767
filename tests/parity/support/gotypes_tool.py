"""``tests/parity/tools/gotypes``: built inside upstream's extracted module and run (no tests).

It prints the Go type facts of upstream's ``DynamoComponentDeploymentSpec`` that
``syncagent/api/gotypes.json`` commits (see that module). Built once per tarball pair and tool
source, as the differential harness is (``tests/support/upstream_source.py``).
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path
from typing import Any

import orjson

from syncagent.api.gotypes import TABLE
from syncagent.devcluster.build import cache_root
from tests.support.upstream_source import (
    BuildReport,
    UpstreamBuildError,
    cached_binary,
    extracted_module,
    go_build,
    reference_root,
    tarball_digests,
)

TOOL_SOURCE = Path(__file__).resolve().parents[1] / "tools" / "gotypes" / "main.go"
TOOL_PACKAGE = "cmd/syncagent-gotypes"
BINARY = "syncagent-gotypes"


def ensure_tool(source: Path) -> BuildReport:
    """The built tool for the tarballs in ``source``, building it unless cached."""
    tool = TOOL_SOURCE.read_bytes()
    parts = [*tarball_digests(source), hashlib.sha256(tool).hexdigest()]
    key = "gotypes-" + hashlib.sha256("".join(parts).encode()).hexdigest()[:20]

    def build(into: Path) -> None:
        module = extracted_module(source, into, log="gotypes")
        package = module / TOOL_PACKAGE
        package.mkdir(parents=True)
        (package / "main.go").write_bytes(tool)
        go_build(module, TOOL_PACKAGE, into, BINARY, log="gotypes")

    return cached_binary(cache_root() / "gotypes" / key, BINARY, build)


def upstream_table(binary: Path) -> dict[str, Any]:
    """The table as the tool reads it from upstream's compiled types."""
    proc = subprocess.run([str(binary)], capture_output=True, check=False, timeout=120)
    if proc.returncode != 0:
        raise UpstreamBuildError(f"{binary} exited {proc.returncode}: {proc.stderr.decode()}")
    table: dict[str, Any] = orjson.loads(proc.stdout)
    return table


def table_text(table: dict[str, Any]) -> str:
    """The committed file's form: sorted keys, one level of indentation, final newline."""
    return orjson.dumps(table, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2).decode() + "\n"


def main() -> None:
    """Regenerate the committed table: ``python -m tests.parity.support.gotypes_tool``."""
    report = ensure_tool(reference_root() / "source")
    TABLE.write_text(table_text(upstream_table(report.binary)))
    print(f"wrote {TABLE}")


if __name__ == "__main__":
    main()

"""The agent lifts its soft limit on open files to the hard one at start (a subprocess whose
soft limit is 256)."""

import resource
import subprocess
import sys

CHILD = """
import resource
from syncagent.runtime.process import raise_fd_limit
print(raise_fd_limit(), resource.getrlimit(resource.RLIMIT_NOFILE)[0])
"""


def test_the_soft_limit_on_open_files_is_lifted_to_the_hard_one():
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]

    def low_soft_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))

    out = subprocess.run(
        [sys.executable, "-c", CHILD],
        preexec_fn=low_soft_limit,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.split()
    assert out == [str(hard), str(hard)]

"""The test control plane's audit log: every request of a ServiceAccount, at Metadata level.

Tests that act with a ServiceAccount token (the chart's identity) read from it what the API
server saw: verb, group, resource, subresource, namespace and response code. Requests with the
admin certificate (the tests themselves, the controller manager) are not logged, so the log
stays small however long the session runs.
"""

from __future__ import annotations

from pathlib import Path

# RequestReceived is left out (every request would appear twice); ResponseStarted is kept so a
# watch shows up as soon as it starts, not only when the agent closes it.
POLICY = """\
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: Metadata
    userGroups: ["system:serviceaccounts"]
  - level: None
"""


def apiserver_args(workdir: Path) -> list[str]:
    """The kube-apiserver flags that write ``workdir/audit.log`` (written here first)."""
    policy = workdir / "audit-policy.yaml"
    policy.write_text(POLICY)
    return [
        f"--audit-policy-file={policy}",
        f"--audit-log-path={log_path(workdir)}",
        "--audit-log-format=json",
        "--audit-log-mode=blocking",
    ]


def log_path(workdir: Path) -> Path:
    return workdir / "audit.log"

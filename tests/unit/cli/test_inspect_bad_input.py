"""Bad input to the inspect commands: one line on stderr, exit code 1 (no cluster needed)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from syncagent.cli.main import main
from syncagent.inspect.session import Connection, default_namespace

GRAPH = """\
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
metadata: {name: g, namespace: demo}
spec:
  components:
    - name: frontend
      type: frontend
      podTemplate: {spec: {containers: [{name: main, image: img:1}]}}
"""


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _kubeconfig(tmp_path: Path) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(
        f"""\
apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "https://127.0.0.1:{_closed_port()}", insecure-skip-tls-verify: true}}}}]
users: [{{name: u, user: {{token: t}}}}]
contexts: [{{name: x, context: {{cluster: c, user: u}}}}]
current-context: x
"""
    )
    return path


def _one_line_error(capsys: pytest.CaptureFixture[str], code: int) -> str:
    out = capsys.readouterr()
    assert code == 1
    assert out.out == ""
    lines = out.err.strip().splitlines()
    assert len(lines) == 1, out.err
    assert lines[0].startswith("error: ")
    return lines[0]


def test_unparsable_graph_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "g.yaml"
    bad.write_text("kind: [\n")
    line = _one_line_error(capsys, main(["plan", "-f", str(bad)]))
    assert "not valid YAML" in line


def test_unknown_kind_in_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "g.yaml"
    bad.write_text("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n")
    line = _one_line_error(capsys, main(["plan", "-f", str(bad)]))
    assert "Widget/default/w" in line
    assert "kind Widget" in line


def test_invalid_graph_names_the_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "g.yaml"
    bad.write_text(GRAPH.replace("type: frontend", "type: 7"))
    line = _one_line_error(capsys, main(["plan", "-f", str(bad)]))
    assert line.startswith("error: DynamoGraphDeployment/demo/g: ")


@pytest.mark.parametrize(
    "argv",
    [
        ["plan", "-f", "GRAPH"],
        ["blame", "deploy/web"],
        ["conflicts", "g"],
        ["managers", "g"],
    ],
)
def test_unreachable_cluster(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graph = tmp_path / "g.yaml"
    graph.write_text(GRAPH)
    argv = [str(graph) if a == "GRAPH" else a for a in argv]
    code = main([*argv, "--kubeconfig", str(_kubeconfig(tmp_path))])
    line = _one_line_error(capsys, code)
    assert "cannot reach the API server at https://127.0.0.1:" in line


def test_blame_needs_kind_and_name(capsys: pytest.CaptureFixture[str]) -> None:
    line = _one_line_error(capsys, main(["blame", "web"]))
    assert "expected KIND/NAME" in line


def test_blame_saved_object_without_managed_fields(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "svc.yaml"
    saved.write_text("apiVersion: v1\nkind: Service\nmetadata: {name: s}\n")
    line = _one_line_error(capsys, main(["blame", "-f", str(saved)]))
    assert "--show-managed-fields" in line


def test_blame_saved_object(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    saved = tmp_path / "svc.yaml"
    saved.write_text(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  labels: {a: b}\n"
        "  managedFields:\n  - manager: me\n    operation: Apply\n"
        "    fieldsV1: {f:metadata: {f:labels: {f:a: {}}}}\n"
    )
    assert main(["blame", "svc/s", "-f", str(saved)]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.rstrip().endswith("a: b"))
    assert line.startswith("me ")


def test_namespace_defaults_to_the_kubeconfig_context(tmp_path):
    config = tmp_path / "kubeconfig"
    config.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: team\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: team, context: {cluster: c, user: u, namespace: team-a}}]\n"
    )
    conn = Connection(namespace=None, kubeconfig=str(config), context=None)
    assert default_namespace(conn) == "team-a"
    conn = Connection(namespace="explicit", kubeconfig=str(config), context=None)
    assert default_namespace(conn) == "explicit"

"""``syncagent render --program auto|component|disaggregatedset|grove`` (offline)."""

from __future__ import annotations

import json

import yaml

from syncagent.cli.main import main
from tests.support.graphs import frontend, worker


def _write(tmp_path, annotations=None, components=None) -> str:
    graph = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "vllm-disagg", "annotations": annotations or {}},
        "spec": {
            "components": components
            or [frontend(), worker("decode", "decode"), worker("prefill", "prefill")]
        },
    }
    path = tmp_path / "g.yaml"
    path.write_text(yaml.safe_dump(graph))
    return str(path)


def _kinds(capsys) -> list[tuple[str, str, str]]:
    items = json.loads(capsys.readouterr().out)
    return [(i["object"]["kind"], i["object"]["metadata"]["name"], i["manager"]) for i in items]


def test_auto_routes_like_the_agent(tmp_path, capsys) -> None:
    path = _write(
        tmp_path,
        {"nvidia.com/enable-grove": "false", "nvidia.com/enable-disaggregatedset": "true"},
    )
    assert main(["render", "-f", path, "-o", "json"]) == 0
    kinds = _kinds(capsys)
    assert ("DisaggregatedSet", "vllm-disagg", "syncagent/disaggregatedset") in kinds
    dcds = [n for k, n, _ in kinds if k == "DynamoComponentDeployment"]
    assert dcds == ["vllm-disagg-frontend"]
    services = {n for k, n, _ in kinds if k == "Service"}
    assert {"vllm-disagg-decode", "vllm-disagg-prefill", "vllm-disagg-frontend"} <= services


def test_explicit_programs(tmp_path, capsys) -> None:
    path = _write(tmp_path)
    assert main(["render", "-f", path, "-o", "json", "--program", "grove"]) == 0
    kinds = _kinds(capsys)
    assert ("PodCliqueSet", "vllm-disagg", "syncagent/grove") in kinds
    assert not [k for k, _, _ in kinds if k == "DynamoComponentDeployment"]
    assert main(["render", "-f", path, "-o", "json", "--program", "component"]) == 0
    kinds = _kinds(capsys)
    assert len([k for k, _, _ in kinds if k == "DynamoComponentDeployment"]) == 3
    assert main(["render", "-f", path, "-o", "json", "--program", "disaggregatedset"]) == 0
    objects = json.loads(capsys.readouterr().out)
    ds = next(i["object"] for i in objects if i["object"]["kind"] == "DisaggregatedSet")
    svc = next(
        i["object"] for i in objects if i["object"]["metadata"]["name"] == "vllm-disagg-decode"
    )
    assert svc["spec"]["selector"] == {
        "disaggregatedset.x-k8s.io/name": "vllm-disagg",
        "disaggregatedset.x-k8s.io/role": "decode",
        "role": "leader",
    }
    assert ds["metadata"]["ownerReferences"][0]["kind"] == "DynamoGraphDeployment"


def test_ineligible_graph_with_explicit_ds_program_is_an_error(tmp_path, capsys) -> None:
    path = _write(tmp_path, components=[frontend(), worker("decode", "decode")])
    assert main(["render", "-f", path, "--program", "disaggregatedset"]) == 1
    err = capsys.readouterr().err.strip()
    assert err == (
        "error: DynamoGraphDeployment/default/vllm-disagg: cannot render with --program "
        "disaggregatedset: DisaggregatedSet requires at least two eligible multinode worker "
        "roles; use --program component"
    )


def test_grove_program_needs_grove(tmp_path, capsys) -> None:
    path = _write(tmp_path)
    assert main(["render", "-f", path, "--program", "grove", "--capability", "grove=false"]) == 1
    assert "--program grove needs --capability grove=true" in capsys.readouterr().err

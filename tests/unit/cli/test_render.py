"""``syncagent render``: offline output, routing, and one-line errors (exit 1)."""

from __future__ import annotations

import io
import json
import textwrap

import pytest
import yaml

from syncagent.cli.main import main, run_cli
from syncagent.cli.pathways import PROGRAMS
from tests.support.toypathway.agent import PROGRAMS as WITH_TOY

PLACEHOLDER = "00000000-0000-0000-0000-000000000000"


def manifest(components, *, name="x", annotations=None, namespace=None):
    meta = {"name": name}
    if annotations is not None:
        meta["annotations"] = annotations
    if namespace:
        meta["namespace"] = namespace
    return yaml.safe_dump(
        {
            "apiVersion": "nvidia.com/v1beta1",
            "kind": "DynamoGraphDeployment",
            "metadata": meta,
            "spec": {"components": components},
        }
    )


def comp(name, ctype, *, image="img:1", **extra):
    container = {"name": "main", "image": image, "args": ["--model", "m"]}
    return {
        "name": name,
        "type": ctype,
        "podTemplate": {"spec": {"containers": [container]}},
        **extra,
    }


NO_GROVE = {"nvidia.com/enable-grove": "false"}


def run(tmp_path, text, *args):
    path = tmp_path / "graph.yaml"
    path.write_text(text)
    return main(["render", "-f", str(path), *args])


def test_yaml_output_lists_every_object_with_its_manager(tmp_path, capsys):
    text = manifest(
        [comp("Frontend", "frontend"), comp("decode", "decode")],
        annotations=NO_GROVE,
        namespace="team",
    )
    assert run(tmp_path, text) == 0
    out = capsys.readouterr().out
    docs = out.split("\n---\n")[1:]
    managers = [d.splitlines()[0] for d in docs]
    objs = [yaml.safe_load(d) for d in docs]
    assert [(m, o["kind"], o["metadata"]["name"]) for m, o in zip(managers, objs, strict=True)] == [
        ("# manager: syncagent/identity", "ServiceAccount", "x-k8s-service-discovery"),
        ("# manager: syncagent/identity", "Role", "x-k8s-service-discovery-role"),
        ("# manager: syncagent/identity", "RoleBinding", "x-k8s-service-discovery-binding"),
        ("# manager: syncagent/components", "DynamoComponentDeployment", "x-frontend"),
        ("# manager: syncagent/components", "DynamoComponentDeployment", "x-decode"),
        ("# manager: syncagent/workloads", "Deployment", "x-frontend"),
        ("# manager: syncagent/services", "Service", "x-frontend"),
        ("# manager: syncagent/workloads", "Deployment", "x-decode"),
        ("# manager: syncagent/services", "Service", "x-decode"),
    ]
    for obj in objs:
        assert obj["metadata"]["namespace"] == "team"
        assert "status" not in obj
        (ref,) = obj["metadata"]["ownerReferences"]
        assert ref["uid"] == PLACEHOLDER
        assert ref["controller"] is True
    assert PLACEHOLDER in out.splitlines()[0]


def test_json_output(tmp_path, capsys):
    text = manifest([comp("decode", "decode", modelRef={"name": "m/1"})], annotations=NO_GROVE)
    assert run(tmp_path, text, "-o", "json") == 0
    items = json.loads(capsys.readouterr().out)
    assert {tuple(sorted(i)) for i in items} == {("manager", "object")}
    model = [i for i in items if i["object"]["metadata"]["name"].startswith("dynamo-model-")]
    assert len(model) == 1
    assert model[0]["manager"] == "syncagent/services"
    assert items[0]["object"]["metadata"]["namespace"] == "default"


def test_namespace_flag_and_stdin(monkeypatch, capsys):
    text = manifest([comp("decode", "decode")], annotations=NO_GROVE)
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    assert main(["render", "-f", "-", "-n", "prod", "-o", "json"]) == 0
    items = json.loads(capsys.readouterr().out)
    assert {i["object"]["metadata"]["namespace"] for i in items} == {"prod"}
    dcd = next(i["object"] for i in items if i["object"]["kind"] == "DynamoComponentDeployment")
    assert dcd["metadata"]["labels"]["nvidia.com/dynamo-namespace"] == "prod-x"


def test_routing_example_6_offline_defaults_to_grove(tmp_path, capsys):
    text = manifest([comp("decode", "decode")])
    assert run(tmp_path, text) == 0
    assert "kind: PodCliqueSet" in capsys.readouterr().out
    assert run(tmp_path, text, "--capability", "grove=false") == 0
    assert "kind: DynamoComponentDeployment" in capsys.readouterr().out


def test_ds_pathway_renders_a_ds_and_is_switchable(tmp_path, capsys):
    annotations = NO_GROVE | {"nvidia.com/enable-disaggregatedset": "true"}
    text = manifest(
        [
            comp("Frontend", "frontend"),
            comp("decode", "decode", multinode={"nodeCount": 2}),
            comp("prefill", "prefill", multinode={"nodeCount": 2}),
        ],
        annotations=annotations,
    )
    assert run(tmp_path, text) == 0
    assert "kind: DisaggregatedSet" in capsys.readouterr().out
    assert run(tmp_path, text, "--capability", "disaggregatedSet=false") == 0
    assert "kind: LeaderWorkerSet" in capsys.readouterr().out


def test_ds_ineligible_graph_falls_back_to_component(tmp_path, capsys):
    annotations = NO_GROVE | {"nvidia.com/enable-disaggregatedset": "true"}
    text = manifest([comp("decode", "decode", multinode={"nodeCount": 2})], annotations=annotations)
    assert run(tmp_path, text) == 0
    assert "kind: LeaderWorkerSet" in capsys.readouterr().out


def test_routing_example_7_multinode_without_lws(tmp_path, capsys):
    text = manifest([comp("decode", "decode", multinode={"nodeCount": 2})], annotations=NO_GROVE)
    assert run(tmp_path, text, "--capability", "lws=false") == 1
    assert capsys.readouterr().err.strip() == (
        "error: DynamoGraphDeployment/default/x: no multinode orchestrator available"
    )


def one_line_error(capsys):
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert "Traceback" not in captured.err
    return lines[0]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("foo: [unclosed\n", "not valid YAML"),
        ("just a string\n", "not a Kubernetes object"),
        ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", "kinds found: ConfigMap"),
        (
            textwrap.dedent("""\
                apiVersion: nvidia.com/v1beta1
                kind: DynamoGraphDeployment
                metadata: {}
                spec: {components: []}
            """),
            "metadata.name",
        ),
    ],
)
def test_bad_input_is_one_line(tmp_path, capsys, text, expected):
    assert run(tmp_path, text, "--capability", "grove=false") == 1
    assert expected in one_line_error(capsys)


def test_missing_component_field(tmp_path, capsys):
    broken = comp("decode", "decode")
    broken.pop("name")
    assert run(tmp_path, manifest([broken], annotations=NO_GROVE)) == 1
    line = one_line_error(capsys)
    assert line.startswith("error: DynamoGraphDeployment/default/x: ")
    assert "name" in line


def test_missing_file(capsys):
    assert main(["render", "-f", "/nonexistent/graph.yaml"]) == 1
    assert "no such file" in one_line_error(capsys)


def test_bad_capability_flag(tmp_path, capsys):
    assert run(tmp_path, manifest([comp("d", "decode")]), "--capability", "lws=auto") == 1
    assert "--capability lws=auto" in one_line_error(capsys)
    # an unknown name is a usage error: exit 1 (2 is reserved for "changes")
    with pytest.raises(SystemExit) as exit_:
        run(tmp_path, manifest([comp("d", "decode")]), "--capability", "volcano=true")
    assert exit_.value.code == 1
    assert "unknown capability 'volcano'" in capsys.readouterr().err


def test_validation_no_main_container(tmp_path, capsys):
    c = comp("decode", "decode")
    c["podTemplate"]["spec"]["containers"] = [{"name": "sidecar", "image": "x"}]
    assert run(tmp_path, manifest([c], annotations=NO_GROVE)) == 1
    assert one_line_error(capsys) == (
        "error: DynamoGraphDeployment/default/x: spec.components[0].podTemplate: a container "
        'named "main" with a non-empty image is required'
    )


def test_validation_generated_name_over_limit(tmp_path, capsys):
    name = "g" * 40
    assert run(tmp_path, manifest([comp("c" * 30, "decode")], name=name, annotations=NO_GROVE)) == 1
    line = one_line_error(capsys)
    assert f'generated resource name "{name}-{"c" * 30}"' in line


def test_validation_lws_name_over_41(tmp_path, capsys):
    name = "vllm-disaggregated-multinode-prod"
    text = manifest(
        [
            comp("decode", "decode", multinode={"nodeCount": 2}),
            comp("prefill", "prefill", multinode={"nodeCount": 2}),
        ],
        name=name,
        annotations=NO_GROVE,
        namespace="prod",
    )
    assert run(tmp_path, text) == 1
    line = one_line_error(capsys)
    assert f'LeaderWorkerSet name "{name}-decode-0" must be at most 41 characters' in line
    assert f'LeaderWorkerSet name "{name}-prefill-0" must be at most 41 characters' in line


def test_lws_name_rule_only_where_a_leaderworkerset_is_rendered(tmp_path, capsys):
    """A graph name too long for a LeaderWorkerSet (V16) renders on Grove, as upstream admits
    it there: its only Grove name rule is ``dgdComponentResourceNameLength``
    (``webhook/validation/dynamographdeployment_helpers.go``), which the shortened PodCliqueSet
    name meets. The name is upstream's ``PCSNameForDGD`` (``internal/dynamo/graph.go``): budget
    45 - (7 + len("prefill-ldr")) = 27, so ``name[:22]`` + "-" + FNV-1a(name) & 0xFFFF as four
    hex digits; e796 was computed with Go's ``hash/fnv``."""
    name = "vllm-disaggregated-multinode-prod"
    text = manifest(
        [
            comp("decode", "decode", multinode={"nodeCount": 2}),
            comp("prefill", "prefill", multinode={"nodeCount": 2}),
        ],
        name=name,
        namespace="prod",
    )
    assert run(tmp_path, text, "-o", "json") == 0
    items = json.loads(capsys.readouterr().out)
    pcs = next(i["object"] for i in items if i["object"]["kind"] == "PodCliqueSet")
    assert pcs["metadata"]["name"] == "vllm-disaggregated-mul-e796"
    assert run(tmp_path, text, "--program", "component") == 1
    assert f'LeaderWorkerSet name "{name}-decode-0" must be at most 41' in one_line_error(capsys)


def test_validation_zero_components(tmp_path, capsys):
    assert run(tmp_path, manifest([], annotations=NO_GROVE)) == 1
    assert one_line_error(capsys) == (
        "error: DynamoGraphDeployment/default/x: spec.components: at least one component is "
        "required"
    )


def test_validation_duplicate_names_render_nothing(tmp_path, capsys):
    text = manifest([comp("Decode", "decode"), comp("decode", "decode")], annotations=NO_GROVE)
    assert run(tmp_path, text) == 1
    assert "component names must be unique case-insensitively" in one_line_error(capsys)


def test_backend_conflict_is_one_line(tmp_path, capsys):
    a = comp("decode", "decode")
    a["podTemplate"]["spec"]["containers"][0]["command"] = ["python3", "-m", "dynamo.vllm"]
    b = comp("prefill", "prefill")
    b["podTemplate"]["spec"]["containers"][0]["command"] = ["python3", "-m", "dynamo.sglang"]
    assert run(tmp_path, manifest([a, b], annotations=NO_GROVE)) == 1
    assert one_line_error(capsys) == (
        "error: DynamoGraphDeployment/default/x: multiple backend frameworks detected for "
        "generated DynamoComponentDeployments: vllm and sglang"
    )


def test_standalone_dcd(tmp_path, capsys):
    text = yaml.safe_dump(
        {
            "apiVersion": "nvidia.com/v1beta1",
            "kind": "DynamoComponentDeployment",
            "metadata": {"name": "lws-manifest", "namespace": "ns"},
            "spec": comp("decode", "decode", multinode={"nodeCount": 2}),
        }
    )
    assert run(tmp_path, text, "-o", "json") == 0
    items = json.loads(capsys.readouterr().out)
    kinds = [(i["object"]["kind"], i["object"]["metadata"]["name"]) for i in items]
    assert kinds == [
        ("ServiceAccount", "lws-manifest-k8s-service-discovery"),
        ("Role", "lws-manifest-k8s-service-discovery-role"),
        ("RoleBinding", "lws-manifest-k8s-service-discovery-binding"),
        ("LeaderWorkerSet", "lws-manifest-0"),
        ("Service", "lws-manifest"),
    ]
    owners = {i["object"]["metadata"]["ownerReferences"][0]["kind"] for i in items}
    assert owners == {"DynamoComponentDeployment"}


def test_discovery_backend_flag(tmp_path, capsys):
    text = manifest([comp("decode", "decode"), comp("Frontend", "frontend")], annotations=NO_GROVE)
    assert run(tmp_path, text, "--discovery-backend", "etcd", "-o", "json") == 0
    items = json.loads(capsys.readouterr().out)
    kinds = [(i["object"]["kind"], i["object"]["metadata"]["name"]) for i in items]
    # no discovery identity, no worker Service; the frontend Service stays
    assert kinds == [
        ("DynamoComponentDeployment", "x-decode"),
        ("DynamoComponentDeployment", "x-frontend"),
        ("Deployment", "x-decode"),
        ("Deployment", "x-frontend"),
        ("Service", "x-frontend"),
    ]
    pod = items[2]["object"]["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "default"


@pytest.mark.parametrize("programs", [PROGRAMS, WITH_TOY], ids=["shipped", "with-toy"])
def test_help_names_every_program(capsys, programs):
    with pytest.raises(SystemExit) as exit_info:
        run_cli(["render", "--help"], programs=programs)
    assert exit_info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "the Component program would apply" not in text
    # each program's summary and name, from the registry the command is given
    for program in programs.programs:
        assert " ".join(program.summary.split()) in text
    assert f"--program {{auto,{','.join(sorted(programs.names))}}}" in text

"""Go's ``json.Marshal`` of typed values as syncagent reproduces it: the committed table of
upstream's types (syncagent/api/gotypes.json) decides field order, ``omitempty`` and the types
that write themselves (syncagent/render/gojson/encode.py).

Expected strings are Go's own: ``json.Marshal`` (Go 1.26, k8s.io/api v0.36.2, upstream's
v1beta1 types at 2a6da14c8) of the same values, decoded by ``json.Unmarshal`` from the inputs
written here, printed once by a scratch program in upstream's module and copied."""

from __future__ import annotations

from typing import Any

from syncagent.api.gotypes import dcd_spec_types
from syncagent.render.gojson import marshal
from syncagent.render.gojson.marshalers import SUPPORTED

CORE = "k8s.io/api/core/v1."
SPEC_INPUT: dict[str, Any] = {
    "name": "w",
    "type": "worker",
    "podTemplate": {
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "i:1",
                    "args": ["a && b <c>"],
                    "resources": {"limits": {"memory": "1.5Gi", "cpu": "1000m"}},
                    "ports": [{"containerPort": 80}],
                    "readinessProbe": {"httpGet": {"path": "/h", "port": "http"}},
                }
            ]
        }
    },
    "multinode": {"nodeCount": 2},
    "sharedMemorySize": "0.5Gi",
}
SPEC_GO = (
    '{"name":"w","type":"worker","podTemplate":{"metadata":{},"spec":{"containers":[{"name":'
    '"main","image":"i:1","args":["a \\u0026\\u0026 b \\u003cc\\u003e"],"ports":[{"containerPort"'
    ':80}],"resources":{"limits":{"cpu":"1","memory":"1536Mi"}},"readinessProbe":{"httpGet":'
    '{"path":"/h","port":"http"}}}]}},"multinode":{"nodeCount":2},"sharedMemorySize":"512Mi"}'
)


def _struct(name: str) -> dict[str, str]:
    return {"kind": "struct", "name": name}


def test_a_dcd_spec_is_written_byte_for_byte_as_go_writes_it() -> None:
    types = dcd_spec_types()
    assert marshal(SPEC_INPUT, types.root_ref(), types) == SPEC_GO


def test_zero_values_are_written_as_go_writes_them() -> None:
    types = dcd_spec_types()
    # Go: json.Marshal(DynamoComponentDeploymentSpec{}), PodTemplateSpec{}, a bare Container.
    assert marshal({}, types.root_ref(), types) == '{"name":""}'
    assert marshal({}, _struct(CORE + "PodTemplateSpec"), types) == (
        '{"metadata":{},"spec":{"containers":null}}'
    )
    container = {"image": "img:1", "name": "main"}
    assert marshal(container, _struct(CORE + "Container"), types) == (
        '{"name":"main","image":"img:1","resources":{}}'
    )


def test_a_map_of_quantities_is_sorted_and_canonical() -> None:
    limits = {"nvidia.com/gpu": 8, "memory": "1.5Gi", "cpu": "1000m"}
    requirements = {"limits": limits}
    text = marshal(requirements, _struct(CORE + "ResourceRequirements"), dcd_spec_types())
    assert text == '{"limits":{"cpu":"1","memory":"1536Mi","nvidia.com/gpu":"8"}}'


def test_every_type_the_table_says_writes_itself_is_reproduced() -> None:
    assert dcd_spec_types().custom_types() <= SUPPORTED

"""The DGDSA CRD against upstream's (config/crd/bases/nvidia.com_dynamographdeploymentscalingadapters.yaml
at 2a6da14c8): names, the served and stored version, and the scale subresource HPA uses."""

from __future__ import annotations

from syncagent.api import crdgen
from syncagent.api.scalingadapter import ScalingAdapterSpec


def test_names_are_upstreams() -> None:
    crd = crdgen.scaling_adapter_crd()
    assert crd["metadata"]["name"] == "dynamographdeploymentscalingadapters.nvidia.com"
    names = crd["spec"]["names"]
    assert names["kind"] == "DynamoGraphDeploymentScalingAdapter"
    assert names["plural"] == "dynamographdeploymentscalingadapters"
    assert names["shortNames"] == ["dgdsa"]
    assert crd["spec"]["scope"] == "Namespaced"


def test_v1beta1_is_served_and_stored_with_scale_at_upstreams_paths() -> None:
    versions = {v["name"]: v for v in crdgen.scaling_adapter_crd()["spec"]["versions"]}
    beta = versions["v1beta1"]
    assert (beta["served"], beta["storage"]) == (True, True)
    assert beta["subresources"] == {
        "status": {},
        "scale": {
            "specReplicasPath": ".spec.replicas",
            "statusReplicasPath": ".status.replicas",
            "labelSelectorPath": ".status.selector",
        },
    }
    # v1alpha1 renames dgdRef.componentName: only a conversion webhook could serve it.
    assert versions["v1alpha1"]["served"] is False


def test_spec_requires_replicas_and_the_component_reference() -> None:
    versions = {v["name"]: v for v in crdgen.scaling_adapter_crd()["spec"]["versions"]}
    spec = versions["v1beta1"]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert spec["required"] == ["dgdRef", "replicas"]
    assert spec["properties"]["replicas"]["minimum"] == 0
    assert spec["properties"]["dgdRef"]["required"] == ["componentName", "name"]


def test_the_model_reads_an_adapter_as_upstream_writes_it_at_v1beta1() -> None:
    spec = ScalingAdapterSpec.model_validate(
        {"replicas": 3, "dgdRef": {"name": "test-dgd", "componentName": "decode"}}
    )
    assert (spec.replicas, spec.dgd_ref.name, spec.dgd_ref.component_name) == (
        3,
        "test-dgd",
        "decode",
    )

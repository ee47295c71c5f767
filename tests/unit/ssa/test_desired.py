import pytest

from syncagent.ssa.desired import check_desired, digest, ref_of
from syncagent.ssa.errors import DesiredObjectError


def cm(**meta):
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "ns", **meta},
        "data": {"a": "1"},
    }


def test_subject_is_kind_namespace_name():
    assert ref_of(cm()).subject == "ConfigMap/ns/c"
    cluster = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}}
    assert ref_of(cluster).subject == "Namespace/ns"


@pytest.mark.parametrize("field", ["managedFields", "uid", "creationTimestamp", "generation"])
def test_server_owned_metadata_is_refused(field):
    with pytest.raises(DesiredObjectError) as err:
        check_desired(cm(**{field: "x"}))
    assert str(err.value).startswith("ConfigMap/ns/c: ")
    assert f"metadata.{field}" in str(err.value)


def test_status_refused_unless_status_subresource():
    obj = {**cm(), "status": {"x": 1}}
    with pytest.raises(DesiredObjectError, match=r"^ConfigMap/ns/c: status"):
        check_desired(obj)
    assert check_desired(obj, subresource="status").name == "c"


def test_status_apply_needs_status():
    with pytest.raises(DesiredObjectError, match="needs a status"):
        check_desired(cm(), subresource="status")


def test_resource_version_only_as_precondition():
    with pytest.raises(DesiredObjectError, match="resourceVersion"):
        check_desired(cm(resourceVersion="5"))
    assert check_desired(cm(resourceVersion="5"), resource_version_precondition=True)
    with pytest.raises(DesiredObjectError, match=r"needs metadata\.resourceVersion"):
        check_desired(cm(), resource_version_precondition=True)


def test_null_is_refused_with_its_path():
    obj = cm()
    obj["spec"] = {"template": {"containers": [{"name": "a", "image": None}]}}
    with pytest.raises(
        DesiredObjectError, match=r"\.spec\.template\.containers\[0\]\.image is null"
    ):
        check_desired(obj)


def test_missing_identity_is_refused():
    with pytest.raises(DesiredObjectError, match=r"metadata\.name"):
        check_desired({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}})
    with pytest.raises(DesiredObjectError, match="kind is required"):
        check_desired({"apiVersion": "v1", "metadata": {"name": "x"}})


def test_digest_ignores_key_order_and_precondition():
    a = {
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {"namespace": "ns", "name": "c"},
        "data": {"b": "2", "a": "1"},
    }
    b = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "ns"},
        "data": {"a": "1", "b": "2"},
    }
    assert digest(a) == digest(b)
    assert digest(a) == digest({**b, "metadata": {**b["metadata"], "resourceVersion": "7"}})
    assert digest(a) != digest({**b, "data": {"a": "1"}})

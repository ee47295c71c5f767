from syncagent.runtime.events import MAX_MESSAGE, Event, ObjectRef, event_body, timestamp

DGD = {
    "apiVersion": "nvidia.com/v1beta1",
    "kind": "DynamoGraphDeployment",
    "metadata": {"name": "g", "namespace": "ns", "uid": "123"},
}


def test_object_ref_from_dict_and_lightkube_object():
    from lightkube.models.meta_v1 import ObjectMeta
    from lightkube.resources.core_v1 import ConfigMap

    assert ObjectRef.of(DGD) == ObjectRef(
        "nvidia.com/v1beta1", "DynamoGraphDeployment", "ns", "g", "123"
    )
    cm = ConfigMap(
        apiVersion="v1", kind="ConfigMap", metadata=ObjectMeta(name="d", namespace="ns", uid="9")
    )
    assert ObjectRef.of(cm) == ObjectRef("v1", "ConfigMap", "ns", "d", "9")
    assert str(ObjectRef.of(DGD)) == "DynamoGraphDeployment/ns/g"


def test_event_body_is_a_core_v1_event():
    event = Event(ObjectRef.of(DGD), "Warning", "ValidationFailed", "x" * (MAX_MESSAGE + 10))
    body = event_body(event, name="g.1", component="syncagent", instance="pod-1", now=0.0)
    assert body["apiVersion"] == "v1"
    assert body["kind"] == "Event"
    assert body["metadata"] == {"name": "g.1", "namespace": "ns"}
    assert body["involvedObject"] == {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "name": "g",
        "namespace": "ns",
        "uid": "123",
    }
    assert body["count"] == 1
    assert len(body["message"]) == MAX_MESSAGE
    assert body["firstTimestamp"] == body["lastTimestamp"] == "1970-01-01T00:00:00Z"
    assert body["source"] == {"component": "syncagent"}
    assert body["reportingInstance"] == "pod-1"


def test_event_annotations_carry_details_for_tools():
    event = Event(ObjectRef.of(DGD), "Warning", "FieldFight", "m", (("a.example/x", "{}"),))
    body = event_body(event, name="g.2", component="syncagent", instance="pod-1", now=0.0)
    assert body["metadata"] == {
        "name": "g.2",
        "namespace": "ns",
        "annotations": {"a.example/x": "{}"},
    }


def test_timestamp_is_rfc3339_seconds():
    assert timestamp(1.9) == "1970-01-01T00:00:01Z"

"""The standard environment of the operator configuration's addresses (upstream graph.go
AddStandardEnvVars at 2a6da14c8): each set address is one variable of ``main``, merged under
what the container already says, the list sorted by name as upstream's MergeEnvs sorts it."""

from __future__ import annotations

from syncagent.render import Environment, Infrastructure, pod_template, source_of_object
from tests.support.kube import main_of

FULL = Infrastructure(
    nats_address="nats://nats.dynamo:4222",
    etcd_address="http://etcd.dynamo:2379",
    model_express_url="http://model-express.dynamo:8080",
    prometheus_endpoint="http://prometheus.monitoring:9090",
)


def source(env=None):
    container = {"name": "main", "image": "img:1", "args": ["--model", "m"]}
    if env is not None:
        container["env"] = env
    return source_of_object(
        {
            "apiVersion": "nvidia.com/v1beta1",
            "kind": "DynamoComponentDeployment",
            "metadata": {"name": "d", "namespace": "ns"},
            "spec": {
                "backendFramework": "vllm",
                "type": "decode",
                "podTemplate": {"spec": {"containers": [container]}},
            },
        }
    )


def main_env(infrastructure, env=None):
    template = pod_template(
        source(env), role="main", env=Environment(infrastructure=infrastructure)
    )
    return main_of(template)["env"]


def values(env):
    return {e["name"]: e.get("value") for e in env}


STANDARD = ("NATS_SERVER", "ETCD_ENDPOINTS", "MODEL_EXPRESS_URL", "PROMETHEUS_ENDPOINT")


def test_upstreams_defaults_add_no_standard_variable():
    assert not set(STANDARD) & set(values(main_env(Infrastructure())))


def test_every_set_address_is_one_variable_and_the_list_stays_sorted():
    env = main_env(FULL)
    got = values(env)
    assert got["NATS_SERVER"] == "nats://nats.dynamo:4222"
    assert got["ETCD_ENDPOINTS"] == "http://etcd.dynamo:2379"
    assert got["MODEL_EXPRESS_URL"] == "http://model-express.dynamo:8080"
    assert got["PROMETHEUS_ENDPOINT"] == "http://prometheus.monitoring:9090"
    names = [e["name"] for e in env]
    assert names == sorted(names)


def test_only_the_addresses_that_are_set():
    got = values(main_env(Infrastructure(prometheus_endpoint="http://p:9090")))
    assert [n for n in STANDARD if n in got] == ["PROMETHEUS_ENDPOINT"]


def test_a_variable_the_user_sets_keeps_the_users_value():
    got = values(main_env(FULL, env=[{"name": "NATS_SERVER", "value": "nats://mine:4222"}]))
    assert got["NATS_SERVER"] == "nats://mine:4222"
    assert got["ETCD_ENDPOINTS"] == "http://etcd.dynamo:2379"

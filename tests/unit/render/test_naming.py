"""Names and the DNS-label truncation rule (disaggregatedset.md §2, rendering.md)."""

from __future__ import annotations

import hashlib

import pytest

from syncagent.render import naming


def test_hash8_is_sha256_prefix():
    assert naming.hash8("test/model") == hashlib.sha256(b"test/model").hexdigest()[:8]
    assert naming.hash8("test/model") == "bbae3530"
    assert naming.hash8("Qwen/Qwen3-0.6B") == "fb68f5a6"


@pytest.mark.parametrize(
    ("value", "limit", "expected"),
    [
        ("vllm-disagg", 18, "vllm-disagg"),
        ("sglang-disagg-multinode", 18, "sglang-di-c7ebc4fb"),
        # the "-" before the hash is not doubled
        ("aaaaaaaa-bbbbbbbbbb", 18, "aaaaaaaa-ad6e47d4"),
        ("verylongname", 8, naming.hash8("verylongname")),
        ("verylongname", 5, naming.hash8("verylongname")[:5]),
    ],
)
def test_trunc_with_hash(value, limit, expected):
    out = naming.trunc_with_hash(value, limit)
    assert out == expected
    assert len(out) <= limit


def test_trunc_with_hash_fits_any_limit():
    value = "a-" * 60
    for limit in range(1, 80):
        out = naming.trunc_with_hash(value, limit)
        assert len(out) <= limit
        assert not out.startswith("-")


def test_trunc_strips_trailing_dash():
    assert naming.trunc("abc-def", 4) == "abc"
    assert naming.trunc("abc", 10) == "abc"


def test_generated_names():
    assert naming.dcd_name("x", "Frontend") == "x-frontend"
    assert naming.lws_name("x-decode") == "x-decode-0"
    assert naming.component_service_name("llm.prod-frontend") == "llm-prod-frontend"
    assert naming.model_service_name("Qwen/Qwen3-0.6B") == "dynamo-model-fb68f5a6"
    assert naming.discovery_service_account("x") == "x-k8s-service-discovery"
    assert naming.discovery_role("x") == "x-k8s-service-discovery-role"
    assert naming.discovery_role_binding("x") == "x-k8s-service-discovery-binding"


def test_dynamo_namespace():
    assert naming.dynamo_namespace("ns", "x") == "ns-x"
    assert naming.dynamo_namespace("ns", "llm.prod") == "ns-llm-prod"
    assert naming.dynamo_namespace("ns", "x", global_namespace=True) == "dynamo"

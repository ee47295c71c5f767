"""Which backend rewrites a component, the origin-version gate, and the GPU count: upstream's
graph_test.go (backend detection), compatibility/operator_origin_test.go and dra_test.go tables."""

from __future__ import annotations

import pytest

from syncagent.render import RenderError
from syncagent.render.inputs import ComponentSource
from syncagent.render.multinode import backend_of
from syncagent.render.multinode.backend import backend_name, detect
from syncagent.render.multinode.executor import origin_allows, uses_mp
from syncagent.render.multinode.gpus import container_gpus
from tests.unit.support.multinode import ORIGIN

# TestDetectBackendFrameworkFromArgs: (name, command, args, backend or "error")
DETECT_ROWS = [
    ("detect VLLM from args", ["/bin/sh", "-c"], ["python -m dynamo.vllm.worker --model test"], "vllm"),
    ("detect SGLang from args", ["/bin/sh", "-c"], ["python -m dynamo.sglang --model test"], "sglang"),
    ("detect TRTLLM from args", ["/bin/sh", "-c"], ["python -m dynamo.trtllm.worker --model test"], "trtllm"),
    ("detect from complex command with pipes", [], ["echo start && python -m dynamo.vllm.worker --model test | tee /tmp/log"], "vllm"),
    ("detect from python3.11", [], ["python3.11 -m dynamo.sglang"], "sglang"),
    ("no backend detected", ["/bin/sh", "-c"], ["echo hello world"], "noop"),
    ("multiple backends detected", [], ["python -m dynamo.vllm.worker && python -m dynamo.sglang"], "error"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("command", "args", "want"), [r[1:] for r in DETECT_ROWS], ids=[r[0] for r in DETECT_ROWS]
)
def test_detect_backend_framework_from_args(command, args, want):
    found = detect(command, args)
    if want == "error":
        assert len(found) > 1
    else:
        assert found == ([] if want == "noop" else [want])


# TestDetermineBackendFramework: (name, type, command, args, explicit, backend or error text)
DETERMINE_ROWS = [
    ("non-worker component returns noop", "frontend", ["/bin/sh", "-c"], ["echo hello world"], "", "noop"),
    ("worker with VLLM detection", "worker", [], ["python -m dynamo.vllm.worker --model test"], "", "vllm"),
    ("worker with explicit framework only", "worker", [], [], "sglang", "sglang"),
    ("worker with detected matching explicit", "worker", [], ["python -m dynamo.sglang"], "sglang", "sglang"),
    ("worker with detected conflicting explicit", "worker", [], ["python -m dynamo.vllm.worker"], "sglang", "error: backend framework mismatch"),
    ("worker with no detection, no explicit - returns noop", "worker", [], [], "", "noop"),
    ("worker with detection failure, no explicit - returns noop", "worker", [], ["echo hello world"], "", "noop"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("ctype", "command", "args", "explicit", "want"),
    [r[1:] for r in DETERMINE_ROWS],
    ids=[r[0] for r in DETERMINE_ROWS],
)
def test_determine_backend_framework(ctype, command, args, explicit, want):
    if want.startswith("error: "):
        with pytest.raises(RenderError, match=want.removeprefix("error: ")):
            backend_name(ctype, command, args, explicit)
    else:
        assert backend_name(ctype, command, args, explicit) == want


def _source(ctype: str, args: list[str] | None, backend: str) -> ComponentSource:
    main: dict = {"name": "main", "image": "i"}
    if args is not None:
        main["args"] = args
    spec = {"name": "c", "type": ctype, "podTemplate": {"spec": {"containers": [main]}}}
    if backend:
        spec["backendFramework"] = backend
    return ComponentSource(name="g-c", namespace="ns", spec=spec, parent_graph="g")


# TestGetBackendFrameworkFromComponent: (name, type, args, graph backendFramework, result)
COMPONENT_ROWS = [
    ("detect from args - VLLM", "worker", ["python -m dynamo.vllm.worker --model test"], "", "vllm"),
    ("explicit framework only", "worker", None, "sglang", "sglang"),
    ("detected matches explicit", "worker", ["python -m dynamo.sglang"], "sglang", "sglang"),
    ("detected conflicts with explicit", "worker", ["python -m dynamo.vllm.worker"], "sglang", "error"),
    ("non-worker component returns noop", "frontend", None, "", "noop"),
    ("worker with no detection, no explicit - returns noop", "worker", None, "", "noop"),
    ("worker with detection failure, no explicit - returns noop", "worker", ["echo hello world"], "", "noop"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("ctype", "args", "backend", "want"),
    [r[1:] for r in COMPONENT_ROWS],
    ids=[r[0] for r in COMPONENT_ROWS],
)
def test_get_backend_framework_from_component(ctype, args, backend, want):
    source = _source(ctype, args, backend)
    if want == "error":
        with pytest.raises(RenderError, match="backend framework mismatch"):
            backend_of(source)
    else:
        assert backend_of(source).name == want


# compatibility.TestGateEnabled (gate minimum 1.0.0). The gate alone: no executor override, and
# a missing origin version read as upstream reads it (graph_owned=False).
GATE_ROWS = [
    ("nil annotations = disabled (backward compat)", None, False),
    ("empty annotations = disabled (backward compat)", None, False),
    ("origin version below threshold = disabled", "0.9.0", False),
    ("origin version at threshold = enabled", "1.0.0", True),
    ("origin version above threshold (release > pre-release) = enabled", "1.0.0", True),
    ("origin version well above threshold = enabled", "2.0.0", True),
    ("pre-release below threshold = disabled", "0.9.0-dev", False),
    ("invalid origin version = disabled (graceful fallback)", "not-a-version", False),
    ("fallback version 0.0.0-unknown = disabled", "0.0.0-unknown", False),
    ("unrelated annotations without origin version = disabled", None, False),
]


@pytest.mark.parametrize(
    ("origin", "want"), [r[1:] for r in GATE_ROWS], ids=[r[0] for r in GATE_ROWS]
)
def test_gate_enabled(origin, want):
    annotations = {"some.other/annotation": "value"} if origin is None else {ORIGIN: origin}
    assert uses_mp(annotations, graph_owned=False) is want


# compatibility.TestGateDifferentThresholds (origin 0.9.0)
THRESHOLD_ROWS = [
    ("threshold below origin = enabled", (0, 8, 0), True),
    ("threshold equal to origin = enabled", (0, 9, 0), True),
    ("threshold above origin = disabled", (1, 0, 0), False),
]


@pytest.mark.parametrize(
    ("minimum", "want"), [r[1:] for r in THRESHOLD_ROWS], ids=[r[0] for r in THRESHOLD_ROWS]
)
def test_gate_different_thresholds(minimum, want):
    assert origin_allows("0.9.0", minimum) is want


def test_semver_forms_masterminds_accepts():
    # Masterminds/semver NewVersion (coercing) reads "v1", "1.2" and build metadata too.
    assert origin_allows("v1", (1, 0, 0))
    assert origin_allows("1.4", (1, 0, 0))
    assert origin_allows("1.0.0+build.5", (1, 0, 0))
    assert not origin_allows("1.0.0-rc.1", (1, 0, 0))
    assert origin_allows("1.0.1-rc.1", (1, 0, 0))
    assert not origin_allows("1.0.0-01", (1, 0, 0))  # numeric pre-release with a leading zero


# dra_test.go, ExtractGPUCountFromResourceRequirements / ResolveGPUCount (scalar part)
def test_gpu_count_picks_the_first_gpu_resource_name():
    """TestExtractGPUCountFromResourceRequirements_DeterministicResourceSelection"""
    resources = {"limits": {"nvidia.com/mig-3g.20gb": "1", "nvidia.com/gpu": "4"}}
    assert container_gpus({"resources": resources}) == 4


def test_gpu_count_of_a_mig_resource():
    """TestExtractGPUCountFromResourceRequirements_MIGResource"""
    assert container_gpus({"resources": {"requests": {"nvidia.com/mig-3g.20gb": "2"}}}) == 2


def test_fractional_gpu_is_rejected():
    """TestExtractGPUCountFromResourceRequirements_RejectsFractionalGPU"""
    with pytest.raises(RenderError, match="must be a whole number") as err:
        container_gpus({"resources": {"limits": {"nvidia.com/gpu": "500m"}}})
    assert "500m" in err.value.message


def test_scalar_gpus_win_over_claims():
    """TestResolveGPUCountPrefersScalarResources"""
    resources = {"limits": {"nvidia.com/gpu": "8"}, "claims": [{"name": "missing"}]}
    assert container_gpus({"resources": resources}) == 8


def test_claims_only_cannot_be_counted_offline():
    # Upstream reads the ResourceClaimTemplates; a pure renderer cannot (docs/multinode.md).
    with pytest.raises(RenderError, match=r"resources\.claims"):
        container_gpus({"resources": {"claims": [{"name": "gpu"}]}})
    assert container_gpus({"resources": {"limits": {"cpu": "2"}}}) == 0


# TestGeneratePodSpecForComponent_UnsupportedBackend (a single-node worker, role main)
@pytest.mark.parametrize(
    ("backend", "error"),
    [("trtllm", None), ("unknown", "unsupported backend framework")],
    ids=["TRTLLM backend implemented", "unknown backend"],
)
def test_unsupported_backend(backend, error):
    from syncagent.render.multinode import backend_for

    if error:
        with pytest.raises(RenderError, match=error):
            backend_for(backend)
    else:
        assert backend_for(backend).name == backend

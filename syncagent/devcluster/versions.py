"""Every third-party version the test control plane and CI build or install: the one place.

Changing a pin here changes what ``syncagent dev-cluster`` builds, which CRDs the cluster tier
installs and the cache key of the built binaries.
"""

from __future__ import annotations

KUBERNETES = "v1.36.3"
ETCD = "v3.6.8"  # the etcd release k8s.io/kubernetes v1.36.3 requires
# Older API servers the cluster tier's API-facing subset also runs against (docs/compatibility.md),
# by minor: the newest patch the module proxy serves. Only kube-apiserver is built for each; etcd
# (a v3 API server to all of them), kubectl and the controllers stay at KUBERNETES.
KUBERNETES_MATRIX = {"1.30": "v1.30.14", "1.33": "v1.33.13"}
LWS_VERSIONS = ("v0.9.0", "v0.10.0")
DEFAULT_LWS = "v0.9.0"
# Grove: the CRDs (from the operator/api module) and the operator, the release upstream's Dynamo
# operator at 2a6da14c8 builds against. The proxy refuses the operator module itself and two of
# its requirements (github.com/kai-scheduler/KAI-scheduler, volcano.sh/apis), so the operator is
# built from a source tarball (``git archive`` of the tag) that the user supplies
# ($SYNCAGENT_REFERENCE/source, or ``dev-cluster up --grove-source``), without the scheduler
# backends that import those two modules; the project never vendors Grove's code.
GROVE = "v0.1.0-alpha.12-rc1"
GROVE_SOURCE = f"grove-operator-{GROVE}.tar.gz"
GROVE_SOURCE_SHA256 = "07fbd766bc32b1acfa4cb9798cf68cab12bbcdd82caad09f8875e5f5935fa53e"
# The scheduler backends left out of that build, each with the refused module it imports.
GROVE_OMITTED_BACKENDS = {
    "kai": "github.com/kai-scheduler/KAI-scheduler",
    "volcano": "volcano.sh/apis",
}
HELM = "v3.19.5"
# The Kubernetes helm assumes without a cluster (``helm template``, ``helm lint``): helm's release
# build stamps its client-go minor (v0.34 for v3.19.5); unstamped it says v1.20.0, which the
# chart's kubeVersion refuses.
HELM_KUBERNETES = ("1", "34")
# The simulated cluster (``dev-cluster up``, the e2e tier): simulated nodes and pods, and the
# real LeaderWorkerSet manager, which also runs the DisaggregatedSet controller. The module proxy
# serves sigs.k8s.io/lws only at v0.9.0 (v0.10.0 answers 403), so only v0.9.0 has a manager.
KWOK = "v0.8.0"
LWS_MANAGER_VERSIONS = ("v0.9.0",)

KUBERNETES_MODULE = "k8s.io/kubernetes"
ETCD_MODULE = "go.etcd.io/etcd/server/v3"
LWS_MODULE = "sigs.k8s.io/lws"
GROVE_MODULE = "github.com/ai-dynamo/grove/operator/api"
HELM_MODULE = "helm.sh/helm/v3"
KWOK_MODULE = "sigs.k8s.io/kwok"


def staging_version(kubernetes: str = KUBERNETES) -> str:
    """``k8s.io/api`` and the other staging modules are tagged v0.X.Y for Kubernetes v1.X.Y."""
    return "v0." + kubernetes.removeprefix("v1.")


# The container image (packaging/build-image). umoci assembles the OCI image layout; mmdebstrap,
# a Debian package that .ci/run installs with apt, builds the root filesystem from Debian's
# packages of IMAGE_DEBIAN_SUITE. Python dependencies are pinned with hashes in
# packaging/requirements.lock, the installer and build backend in packaging/tools.lock.
UMOCI = "v0.6.0"
UMOCI_MODULE = "github.com/opencontainers/umoci"
# The image's bytes depend on the root-filesystem builder, so build-image checks this version.
MMDEBSTRAP = "1.3.5-7"
IMAGE_DEBIAN_SUITE = "bookworm"
IMAGE_DEBIAN_PACKAGES = ("python3.11-minimal", "libpython3.11-stdlib")
# Debian packages that .ci/run installs with apt for the image tier: the build's mmdebstrap, and
# the tools the tests read, rebuild and import the image with. They are taken by name from the
# machine's Debian release: a suite keeps only its newest point release, so an exact version pin
# would break CI at the next security update. The image's own packages are pinned by suite and
# by the cached .deb files (packaging/README.md).
IMAGE_APT_PACKAGES = ("mmdebstrap", "skopeo", "buildah", "containerd")

"""The pinned third-party CRDs: LeaderWorkerSet + DisaggregatedSet (per LWS version) and Grove.

They come from the Go module downloads named in :mod:`versions`. Where the module proxy refuses a
pinned version (it answers 403 "not available" for ``sigs.k8s.io/lws@v0.10.0``; it has refused
``github.com/ai-dynamo/grove/operator/api`` versions before, and serves v0.1.0-alpha.12-rc1 today),
the byte-exact upstream file shipped in ``third_party/`` is used instead; :data:`VENDORED_SHA256`
pins each one and a unit test checks it. The Grove operator's own CRDs beyond these three
(ClusterTopologyBinding, PodGang) come with its source (:mod:`grove_operator`).
"""

from __future__ import annotations

import hashlib
import sys
from importlib import resources
from pathlib import Path

from syncagent.devcluster import versions
from syncagent.devcluster.gomod import GoModuleError, module_dir

LWS_FILES = (
    "leaderworkerset.x-k8s.io_leaderworkersets.yaml",
    "disaggregatedset.x-k8s.io_disaggregatedsets.yaml",
)
GROVE_FILES = (
    "grove.io_podcliquesets.yaml",
    "grove.io_podcliques.yaml",
    "grove.io_podcliquescalinggroups.yaml",
)
LWS_CRD_DIR = "config/crd/bases"
GROVE_CRD_DIR = "core/v1alpha1/crds"

# sha256 of the upstream blobs at the pinned tags (kubernetes-sigs/lws v0.10.0 2161f38f,
# ai-dynamo/grove operator/api v0.1.0-alpha.12-rc1 19905d53; these three files are byte-identical
# to alpha.11's).
VENDORED_SHA256 = {
    "leaderworkerset.x-k8s.io_leaderworkersets.v0.10.0.yaml": "c5dcad8ed943e495490241f00b9a1b45d51203b6d484020db3636d5bf553568e",
    "disaggregatedset.x-k8s.io_disaggregatedsets.v0.10.0.yaml": "6dc06e630cc88c28ba5406dc4a15ac593f4ec1af89ef439e1bdb770d4a7e74a8",
    "disaggregatedset.x-k8s.io_disaggregatedsetrolescalers.v0.10.0.yaml": "3650e4cd42d12e14569ec8042d0c797c803e05eff9a3959b3406184d39cfef9f",
    "grove.io_podcliquesets.v0.1.0-alpha.12-rc1.yaml": "2a7622f2086fcf9fdd76e03de26b318860340bb27b6f4093700783da0220a466",
    "grove.io_podcliques.v0.1.0-alpha.12-rc1.yaml": "817388b0b1287b9140de3c44c48d31982db213f98a2475e45ec18638f3c83e04",
    "grove.io_podcliquescalinggroups.v0.1.0-alpha.12-rc1.yaml": "4d8f9bb5768d5ce43d2a81ba3fd046df4d5622b93ba5256676b38b3de8387812",
}


def lws_crds(lws_version: str) -> list[Path]:
    files = list(LWS_FILES)
    if lws_version != "v0.9.0":
        # The DS role-scaler CRD first ships in v0.10.0 (DS roles[].scaling.mode: External).
        files.append("disaggregatedset.x-k8s.io_disaggregatedsetrolescalers.yaml")
    return _from_module_or_vendored(versions.LWS_MODULE, lws_version, LWS_CRD_DIR, files)


def grove_crds() -> list[Path]:
    return _from_module_or_vendored(
        versions.GROVE_MODULE, versions.GROVE, GROVE_CRD_DIR, GROVE_FILES
    )


def vendored_path(name: str) -> Path:
    return Path(str(resources.files("syncagent.devcluster") / "third_party" / name))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _from_module_or_vendored(
    module: str, version: str, subdir: str, files: list[str] | tuple[str, ...]
) -> list[Path]:
    try:
        folder = module_dir(module, version) / subdir
    except GoModuleError as err:
        print(f"dev-cluster: {err}; using the vendored upstream copies", file=sys.stderr)
        return [_vendored(name, version) for name in files]
    return [folder / name for name in files]


def _vendored(name: str, version: str) -> Path:
    vendored = name.removesuffix(".yaml") + f".{version}.yaml"
    path = vendored_path(vendored)
    expected = VENDORED_SHA256.get(vendored)
    if expected is None or not path.is_file():
        raise GoModuleError(f"{name}@{version}: not downloadable and no vendored copy is pinned")
    if sha256(path) != expected:
        raise GoModuleError(f"{path}: sha256 differs from the pinned upstream blob")
    return path

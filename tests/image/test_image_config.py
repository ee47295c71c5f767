"""The archive ``packaging/build-image`` wrote, as other tools read it: skopeo (containers/image,
the library of Podman and CRI-O) for the image config, umoci for the runtime config a bundle
gets, and the index annotations ``ctr images import`` names the image by."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

import syncagent
from tests.image.support.build import REPO, Built, build_image, index
from tests.image.support.container import Bundle, run_tool, unpack

PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
REFERENCE = f"ghcr.io/syncagent/syncagent:{syncagent.__version__}"


@pytest.fixture(scope="module")
def config(built: Built) -> dict:
    return json.loads(run_tool("skopeo", "inspect", "--config", f"oci-archive:{built.archive}"))


@pytest.fixture(scope="module")
def bundle(built: Built, tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    return unpack(built.archive, syncagent.__version__, tmp_path_factory.mktemp("image"))


def test_entrypoint_is_syncagent_and_user_is_not_root(config: dict) -> None:
    assert config["config"]["Entrypoint"] == ["syncagent"]
    assert "Cmd" not in config["config"] or not config["config"]["Cmd"]
    assert config["config"]["User"] == "65532:65532"
    assert (config["os"], config["architecture"]) == ("linux", "amd64")


def test_labels_name_source_version_and_licence(config: dict) -> None:
    labels = config["config"]["Labels"]
    assert labels["org.opencontainers.image.version"] == syncagent.__version__
    assert labels["org.opencontainers.image.source"] == PROJECT["urls"]["Source"]
    assert labels["org.opencontainers.image.licenses"] == PROJECT["license"]["text"]
    assert labels["org.opencontainers.image.title"] == "syncagent"


def test_runtime_config_runs_syncagent_as_the_non_root_user(bundle: Bundle) -> None:
    process = bundle.runtime["process"]
    assert process["args"] == ["syncagent"]
    assert (process["user"]["uid"], process["user"]["gid"]) == (65532, 65532)
    # The user has a name in the image, and the entrypoint resolves on the image's PATH.
    passwd = (bundle.rootfs / "etc" / "passwd").read_text().splitlines()
    assert any(line.split(":")[2:4] == ["65532", "65532"] for line in passwd)
    found = [
        Path(d) / "syncagent"
        for d in bundle.env()["PATH"].split(":")
        if (bundle.rootfs / d.lstrip("/") / "syncagent").is_file()
    ]
    assert found == [Path("/opt/syncagent/bin/syncagent")]


def test_python_is_debian_3_11_and_the_dependencies_are_the_locked_ones(bundle: Bundle) -> None:
    status = (bundle.rootfs / "var" / "lib" / "dpkg" / "status").read_text()
    assert "Package: python3.11-minimal\nStatus: install ok installed" in status
    site = bundle.rootfs / "opt" / "syncagent" / "lib" / "python3.11" / "site-packages"
    installed = {
        p.name.removesuffix(".dist-info").rsplit("-", 1)[0].lower().replace("_", "-"): p.name
        for p in site.glob("*.dist-info")
    }
    locked = {}
    for line in (REPO / "packaging" / "requirements.lock").read_text().splitlines():
        if "==" in line and not line.startswith(("#", " ")):
            name, version = line.split(" ")[0].split("==")
            locked[name.lower().replace("_", "-")] = version
    assert set(installed) == set(locked) | {"syncagent"}
    for name, version in locked.items():
        assert installed[name].removesuffix(".dist-info").endswith(f"-{version}"), name


def test_archive_names_the_image_the_chart_deploys(built: Built) -> None:
    (manifest,) = index(built.archive)["manifests"]
    annotations = manifest["annotations"]
    # `kind load image-archive` and `ctr images import` name the image after this annotation.
    assert annotations["io.containerd.image.name"] == REFERENCE
    assert annotations["org.opencontainers.image.ref.name"] == syncagent.__version__
    assert built.archive.name == f"syncagent-{syncagent.__version__}.oci.tar"


def test_same_inputs_build_the_same_digest(built: Built, tmp_path: Path) -> None:
    again = build_image(tmp_path)
    assert again.digest == built.digest
    assert again.archive.read_bytes() == built.archive.read_bytes()


def test_containerfile_builds_the_same_config_with_buildah(
    built: Built, config: dict, tmp_path: Path
) -> None:
    # Buildah with the vfs driver needs neither a daemon nor a registry (FROM scratch).
    storage = ("--root", str(tmp_path / "root"), "--runroot", str(tmp_path / "run"))
    storage += ("--storage-driver", "vfs")
    context = built.archive.parent / "rootfs"
    image = run_tool(
        "buildah", *storage, "build", "--quiet", "--isolation", "chroot",
        "-f", str(REPO / "packaging" / "Containerfile"), str(context),
    ).strip().splitlines()[-1]  # fmt: skip
    inspected = json.loads(run_tool("buildah", *storage, "inspect", "--type", "image", image))
    theirs, ours = inspected["OCIv1"]["config"], config["config"]
    for key in ("Entrypoint", "User", "Env", "WorkingDir"):
        assert theirs.get(key) == ours.get(key), key
    labels = {k: v for k, v in theirs["Labels"].items() if not k.startswith("io.buildah.")}
    assert labels.items() <= ours["Labels"].items()
    assert set(ours["Labels"]) - set(labels) == {
        "org.opencontainers.image.created",
        "org.opencontainers.image.revision",
    }

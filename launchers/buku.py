"""buku: a bookmark manager; bukuserver is its web UI and REST API (bookmarks, tags)."""

from __future__ import annotations

import secrets
from pathlib import Path

from toolbed.registry import register

from ._base import LOOPBACK, Launcher

# The 5.1 wheel ships bukuserver without its apidocs folder, and the server reads
# apidocs/template.yml (the Swagger template) at start: without it, it crashes.
_SWAGGER_STUB = """\
swagger: "2.0"
info:
  title: Bukuserver API
  description: REST API of the buku bookmark manager (template written by toolbed).
  version: "5.1"
"""

# buku fetches page titles from the web (add/update with fetch, refresh). It sends
# every such request through $https_proxy when set; pointing that at a closed port on
# the loopback makes each fetch fail at once, so nothing ever leaves this machine.
_NO_NETWORK_PROXY = f"http://{LOOPBACK}:9"


@register("launcher", "buku")
class BukuLauncher(Launcher):
    package = "buku[server]"
    health_path = "/api/tags"

    def install(self) -> bool:
        installed = super().install()
        self._write_swagger_stub()
        return installed

    def _write_swagger_stub(self) -> None:
        lib = self.install_dir / "venv" / "lib"
        for package_dir in lib.glob("python*/site-packages/bukuserver"):
            template = package_dir / "apidocs" / "template.yml"
            if not template.is_file():
                template.parent.mkdir(parents=True, exist_ok=True)
                template.write_text(_SWAGGER_STUB)

    def configure(self, data_dir: Path, port: int, env: dict[str, str]) -> list[str]:
        self._write_swagger_stub()  # an install made before the stub existed
        return [
            str(self.bin_dir / "bukuserver"), "run",
            "--host", LOOPBACK, "--port", str(port), "--no-debug", "--no-reload",
        ]

    def process_env(self, data_dir: Path) -> dict[str, str]:
        return {
            "BUKUSERVER_DB_FILE": str(data_dir / "bookmarks.db"),
            "BUKUSERVER_SECRET_KEY": secrets.token_hex(24),
            "BUKUSERVER_AUTOFETCH": "false",
            "BUKUSERVER_DISABLE_FAVICON": "true",
            "FLASK_DEBUG": "0",
            "https_proxy": _NO_NETWORK_PROXY,
            "HTTPS_PROXY": _NO_NETWORK_PROXY,
            "http_proxy": _NO_NETWORK_PROXY,
            "HTTP_PROXY": _NO_NETWORK_PROXY,
        }

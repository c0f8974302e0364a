"""WsgiDAV: a WebDAV file server (folders, files, custom properties, locks)."""

from __future__ import annotations

import json
from pathlib import Path

from toolbed.registry import register

from ._base import LOOPBACK, Launcher


@register("launcher", "wsgidav")
class WsgiDAVLauncher(Launcher):
    package = "wsgidav"
    extras = ("cheroot==11.1.2",)
    # without credentials the root answers 401: proof enough that the server is up
    health_path = "/"

    def configure(self, data_dir: Path, port: int, env: dict[str, str]) -> list[str]:
        # the shared tree lives in its own folder, apart from the config and the log
        root = data_dir / "files"
        root.mkdir(exist_ok=True)
        config = {
            "host": LOOPBACK,
            "port": port,
            "server": "cheroot",
            "provider_mapping": {"/": {"root": str(root), "readonly": False}},
            # basic auth against one per-run account (SimpleDomainController)
            "http_authenticator": {
                "domain_controller": None,
                "accept_basic": True,
                "accept_digest": False,
                "default_to_digest": False,
                "trusted_auth_header": None,
            },
            "simple_dc": {
                "user_mapping": {"*": {self.user: {"password": self.password(env)}}},
            },
            # dead (custom) properties and locks, both kept in memory for the run
            "property_manager": True,
            "lock_storage": True,
            # no HTML directory browser (and so no anonymous asset share), no CORS
            "middleware_stack": [
                "wsgidav.error_printer.ErrorPrinter",
                "wsgidav.http_authenticator.HTTPAuthenticator",
                "wsgidav.request_resolver.RequestResolver",
            ],
            "suppress_version_info": True,
            "verbose": 3,
        }
        path = data_dir / "wsgidav.json"
        path.write_text(json.dumps(config, indent=2))
        path.chmod(0o600)
        return [
            str(self.bin_dir / "wsgidav"), "--config", str(path),
            "--host", LOOPBACK, "--port", str(port),
        ]

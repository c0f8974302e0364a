"""Radicale: a CalDAV/CardDAV server (calendars, events, address books, contacts)."""

from __future__ import annotations

from pathlib import Path

from toolbed.registry import register

from ._base import LOOPBACK, Launcher


@register("launcher", "radicale")
class RadicaleLauncher(Launcher):
    package = "radicale"
    health_path = "/.web/"

    def configure(self, data_dir: Path, port: int, env: dict[str, str]) -> list[str]:
        users = data_dir / "users"
        # htpasswd with plain passwords: the file lives in the run's private temp dir
        users.write_text(f"{self.user}:{self.password(env)}\n")
        users.chmod(0o600)
        return [
            str(self.bin_dir / "python"), "-m", "radicale",
            "--server-hosts", f"{LOOPBACK}:{port}",
            "--auth-type", "htpasswd",
            "--auth-htpasswd-filename", str(users),
            "--auth-htpasswd-encryption", "plain",
            "--rights-type", "owner_only",
            "--storage-filesystem-folder", str(data_dir / "collections"),
        ]

"""Xandikos: a git-backed CalDAV/CardDAV server (calendars, events, tasks, address books)."""

from __future__ import annotations

from pathlib import Path

from toolbed.registry import register

from ._base import LOOPBACK, Launcher

_GITCONFIG = """\
[user]
\tname = Xandikos
\temail = xandikos@localhost
"""


@register("launcher", "xandikos")
class XandikosLauncher(Launcher):
    """One principal, ``/user/``, with a default calendar and a default address book.

    Xandikos checks no credentials over plain HTTP: its only built-in auth
    (``--htpasswd``) refuses to start without ``--autocert``, a self-signed TLS
    certificate that an ``http://`` base URL cannot use. The catalog entry therefore
    declares ``auth: {scheme: none}``, and the server listens on 127.0.0.1 only.
    """

    package = "xandikos"
    health_path = "/"

    def configure(self, data_dir: Path, port: int, env: dict[str, str]) -> list[str]:
        # every write is a git commit in the collection's own repository; a fixed
        # identity keeps git from deriving one from the user and host names
        (data_dir / "gitconfig").write_text(_GITCONFIG)
        return [
            str(self.bin_dir / "xandikos"), "serve",
            "--directory", str(data_dir / "dav"),
            "--state-dir", str(data_dir / "state"),
            "--defaults",
            "--current-user-principal", "/user/",
            "--listen-address", LOOPBACK,
            "--port", str(port),
            "--no-detect-systemd",
            "--imip-send", "off",
        ]

    def process_env(self, data_dir: Path) -> dict[str, str]:
        return {
            "GIT_CONFIG_GLOBAL": str(data_dir / "gitconfig"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "XDG_DATA_HOME": str(data_dir / "state"),
        }

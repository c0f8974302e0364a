"""I Hate Money: shared budgets (projects, participants, bills, balances)."""

from __future__ import annotations

import secrets
from pathlib import Path

import httpx

from toolbed.errors import AppStartError
from toolbed.registry import register

from ._base import LOOPBACK, Launcher

# A Python settings file, read by ihatemoney through IHATEMONEY_SETTINGS_FILE_PATH.
# ALLOW_PUBLIC_PROJECT_CREATION stays on: the API needs it both to create a project
# and to edit one (PUT /api/projects/<id> is refused without it).
_CFG = """\
SQLALCHEMY_DATABASE_URI = {db!r}
SECRET_KEY = {secret!r}
SESSION_COOKIE_SECURE = False
ACTIVATE_DEMO_PROJECT = False
ACTIVATE_ADMIN_DASHBOARD = False
ALLOW_PUBLIC_PROJECT_CREATION = True
ENABLE_CAPTCHA = False
# never send mail (project creation and edits send one to the contact address)
MAIL_SUPPRESS_SEND = True
MAIL_SERVER = "127.0.0.1"
MAIL_PORT = 9
BABEL_DEFAULT_TIMEZONE = "UTC"
# every basic-auth request checks the private code against its hash; the default
# (scrypt) costs ~0.4 s a call on a small machine. The code is a fresh 144-bit random
# value each run, so a cheaper hash loses nothing.
PASSWORD_HASH_METHOD = "pbkdf2:sha256:10000"
"""

PROJECT_NAME = "Maple Street flat"
CONTACT_EMAIL = "priya.sharma@example.org"
CURRENCY = "EUR"


@register("launcher", "ihatemoney")
class IHateMoneyLauncher(Launcher):
    package = "ihatemoney"
    health_path = "/api/currencies"
    # basic auth is per project: the user is the project id, the password its private
    # code; bootstrap creates this project with this run's code
    user = "maple-street-flat"

    def configure(self, data_dir: Path, port: int, env: dict[str, str]) -> list[str]:
        cfg = data_dir / "ihatemoney.cfg"
        cfg.write_text(
            _CFG.format(
                db=f"sqlite:///{data_dir / 'ihatemoney.db'}", secret=secrets.token_hex(32)
            )
        )
        cfg.chmod(0o600)
        return [
            str(self.bin_dir / "flask"), "--app", "ihatemoney.wsgi",
            "run", "--host", LOOPBACK, "--port", str(port), "--no-reload", "--no-debugger",
        ]

    def process_env(self, data_dir: Path) -> dict[str, str]:
        return {
            "IHATEMONEY_SETTINGS_FILE_PATH": str(data_dir / "ihatemoney.cfg"),
            "FLASK_DEBUG": "0",
            # the exchange-rate lookup (api.exchangerate.host) must never leave the
            # machine: outbound HTTP(S) goes to a dead loopback proxy
            "HTTP_PROXY": f"http://{LOOPBACK}:9",
            "HTTPS_PROXY": f"http://{LOOPBACK}:9",
            "NO_PROXY": f"{LOOPBACK},localhost",
        }

    def bootstrap(self, base_url: str, env: dict[str, str]) -> None:
        # creating a project needs no login; its id and private code are the run's
        # basic-auth user and password
        response = httpx.post(
            f"{base_url}/api/projects",
            json={
                "id": self.user,
                "name": PROJECT_NAME,
                "password": self.password(env),
                "contact_email": CONTACT_EMAIL,
                "default_currency": CURRENCY,
            },
            timeout=10,
        )
        if response.status_code != 201 or response.json() != self.user:
            raise AppStartError(
                f"ihatemoney started but creating its project failed: "
                f"HTTP {response.status_code} {response.text[:200]}"
            )

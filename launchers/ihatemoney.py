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

# (id, name, contact email, currency): the English flat share every task logs into
# by default, and a Chinese road trip (issue 20); both take this run's private code
PROJECTS = (
    ("maple-street-flat", "Maple Street flat", "priya.sharma@example.org", "EUR"),
    ("yunnan-trip-2026", "云南自驾游", "wang.fang@example.cn", "CNY"),
)


@register("launcher", "ihatemoney")
class IHateMoneyLauncher(Launcher):
    package = "ihatemoney"
    health_path = "/api/currencies"
    # basic auth is per project: the user is the project id (the call's `project`
    # argument, auth.user_arg in the catalog; this one when a call names none), the
    # password its private code; bootstrap creates the projects with this run's code
    user = PROJECTS[0][0]

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
        # creating a project needs no login; a project's id and private code are the
        # basic-auth user and password of the calls about it
        for project, name, email, currency in PROJECTS:
            response = httpx.post(
                f"{base_url}/api/projects",
                json={"id": project, "name": name, "password": self.password(env),
                      "contact_email": email, "default_currency": currency},
                timeout=10,
            )
            if response.status_code != 201 or response.json() != project:
                raise AppStartError(
                    f"ihatemoney started but creating its project {project} failed: "
                    f"HTTP {response.status_code} {response.text[:200]}"
                )

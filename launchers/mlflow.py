"""MLflow: an ML tracking server (experiments, runs, metrics, model registry)."""

from __future__ import annotations

import secrets
from pathlib import Path

from toolbed.registry import register

from ._base import LOOPBACK, Launcher

# MLflow's basic-auth app reads this file (MLFLOW_AUTH_CONFIG_PATH). The admin user is
# created with this run's password the first time the (empty) user store is opened.
# Checking a password is a slow PBKDF2 hash (about a second a request), so successful
# checks are cached: the catalog exposes no API that changes a password.
_AUTH_INI = """\
[mlflow]
default_permission = READ
database_uri = sqlite:///{db}
admin_username = {user}
admin_password = {password}
authorization_function = mlflow.server.auth:authenticate_request_basic_auth
grant_default_workspace_access = false
auth_cache_ttl_seconds = 86400
"""


@register("launcher", "mlflow")
class MlflowLauncher(Launcher):
    package = "mlflow"
    # the basic-auth app (--app-name basic-auth) needs Flask-WTF, MLflow's `auth` extra
    extras = ("Flask-WTF==1.3.0",)
    health_path = "/health"
    user = "admin"
    # two Python processes (the CLI and uvicorn) import the whole of MLflow: 5 to 40 s
    start_timeout = 180.0

    def configure(self, data_dir: Path, port: int, env: dict[str, str]) -> list[str]:
        auth_ini = data_dir / "basic_auth.ini"
        auth_ini.write_text(
            _AUTH_INI.format(
                db=data_dir / "basic_auth.db",
                user=self.user,
                # configparser interpolates '%'
                password=self.password(env).replace("%", "%%"),
            )
        )
        auth_ini.chmod(0o600)
        (data_dir / "artifacts").mkdir(exist_ok=True)
        return [
            str(self.bin_dir / "mlflow"), "server",
            "--host", LOOPBACK,
            "--port", str(port),
            "--backend-store-uri", f"sqlite:///{data_dir / 'mlflow.db'}",
            "--default-artifact-root", str(data_dir / "artifacts"),
            "--workers", "1",
            "--app-name", "basic-auth",
        ]

    def process_env(self, data_dir: Path) -> dict[str, str]:
        return {
            "MLFLOW_AUTH_CONFIG_PATH": str(data_dir / "basic_auth.ini"),
            # signs the auth app's CSRF tokens (only its sign-up web form uses them)
            "MLFLOW_FLASK_SERVER_SECRET_KEY": secrets.token_hex(32),
            # without it the server also starts 7 job-runner processes (about 1.3 GB more)
            "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false",
            # no usage telemetry leaves the machine
            "MLFLOW_DISABLE_TELEMETRY": "true",
            "DO_NOT_TRACK": "true",
        }

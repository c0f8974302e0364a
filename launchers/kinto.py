"""Kinto: a JSON document store (buckets, collections, records, groups, accounts)."""

from __future__ import annotations

import secrets
from pathlib import Path

import httpx

from toolbed.errors import AppStartError
from toolbed.registry import register

from ._base import LOOPBACK, Launcher

_INI = """\
[server:main]
use = egg:waitress#main
host = {host}
port = {port}

[app:main]
use = egg:kinto
kinto.includes = kinto.plugins.default_bucket
                 kinto.plugins.accounts
                 kinto.plugins.history
kinto.storage_backend = kinto.core.storage.memory
kinto.cache_backend = kinto.core.cache.memory
kinto.permission_backend = kinto.core.permission.memory
kinto.userid_hmac_secret = {hmac}
kinto.default_bucket_hmac_secret = {hmac2}
multiauth.policies = account
multiauth.policy.account.use = kinto.plugins.accounts.AccountsPolicy
kinto.account_create_principals = system.Everyone
kinto.account_write_principals = account:{admin}
kinto.bucket_create_principals = account:{admin}
kinto.experimental_permissions_endpoint = true

[loggers]
keys = root

[handlers]
keys = console

[formatters]
keys = plain

[logger_root]
level = WARNING
handlers = console

[handler_console]
class = StreamHandler
args = (sys.stderr,)
level = NOTSET
formatter = plain

[formatter_plain]
format = %(asctime)s %(levelname)s %(name)s %(message)s
"""


@register("launcher", "kinto")
class KintoLauncher(Launcher):
    package = "kinto"
    health_path = "/v1/__heartbeat__"
    user = "admin"

    def configure(self, data_dir: Path, port: int, env: dict[str, str]) -> list[str]:
        ini = data_dir / "kinto.ini"
        ini.write_text(
            _INI.format(
                host=LOOPBACK, port=port, admin=self.user,
                hmac=secrets.token_hex(32), hmac2=secrets.token_hex(32),
            )
        )
        ini.chmod(0o600)
        return [str(self.bin_dir / "kinto"), "start", "--ini", str(ini), "--port", str(port)]

    def bootstrap(self, base_url: str, env: dict[str, str]) -> None:
        # the accounts plugin lets anyone create an account; the admin one owns buckets
        response = httpx.put(
            f"{base_url}/v1/accounts/{self.user}",
            json={"data": {"password": self.password(env)}},
            timeout=10,
        )
        if response.status_code not in (200, 201):
            raise AppStartError(
                f"kinto started but creating its admin account failed: "
                f"HTTP {response.status_code}"
            )

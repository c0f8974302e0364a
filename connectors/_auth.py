"""Credentials for a call, read from the environment at call time.

Nothing here stores a secret: the App names the env vars, and ``auth_for`` reads
them when a request is built. A missing variable is an error that names it.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping

from toolbed.apis import ApiKeyAuth, App, Auth, BasicAuth, BearerAuth
from toolbed.errors import CredentialError

__all__ = ["auth_for", "secret_env_vars"]


def secret_env_vars(auth: Auth) -> list[str]:
    """The env vars of ``auth`` that hold secrets (a user name is not one)."""
    if isinstance(auth, BasicAuth):
        return [auth.password_env]
    if isinstance(auth, ApiKeyAuth | BearerAuth):
        return [auth.env]
    return []


def auth_for(app: App, env: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """The ``(headers, query params)`` that authenticate a call to ``app``."""
    auth = app.auth

    def need(var: str, what: str) -> str:
        value = env.get(var)
        if not value:
            hint = (
                f"start the app with `toolbed apps up {app.app}` (it generates credentials)"
                if app.tier == "selfhosted"
                else f"get one at {app.docs}"
            )
            raise CredentialError(
                f"{app.app} needs the environment variable {var} ({what}); "
                f"set it with `export {var}=...` or {hint}"
            )
        return value

    if isinstance(auth, BasicAuth):
        user = need(auth.user_env, "user name for basic auth")
        password = need(auth.password_env, "password for basic auth")
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        return {"Authorization": f"Basic {token}"}, {}
    if isinstance(auth, BearerAuth):
        return {"Authorization": f"Bearer {need(auth.env, 'bearer token')}"}, {}
    if isinstance(auth, ApiKeyAuth):
        key = auth.prefix + need(auth.env, "API key")
        if auth.location == "header":
            return {auth.name: key}, {}
        return {}, {auth.name: key}
    return {}, {}

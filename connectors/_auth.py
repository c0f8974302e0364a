"""Credentials for a call, read from the environment at call time.

Nothing here stores a secret: the App names the env vars, and ``auth_for`` reads
them when a request is built. A missing variable is an error that names it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolbed.apis import App
from toolbed.errors import CredentialError

__all__ = ["auth_for"]


def auth_for(app: App, env: Mapping[str, str], args: Mapping[str, Any] | None = None,
             ) -> tuple[dict[str, str], dict[str, str]]:
    """The ``(headers, query params)`` that authenticate a call to ``app`` with ``args``
    (the scheme builds them, see ``apis/_schema.py``); a missing variable says how to
    set it."""
    auth = app.auth

    def need(var: str, what: str) -> str:
        value = env.get(var)
        if not value:
            hint = (
                f"start the app with `toolbed apps up {app.app}` (it generates credentials)"
                if app.local
                else f"get one at {app.docs}"
            )
            raise CredentialError(
                f"{app.app} needs the environment variable {var} ({what}); "
                f"set it with `export {var}=...` or {hint}"
            )
        return value

    return auth.apply(need, args)

"""Synapse: the reference Matrix homeserver (chat rooms, messages, members, profiles).

The config is the one Synapse generates itself, then narrowed for toolbed: one plain
HTTP listener on 127.0.0.1 serving only the client (and admin) API, no federation
listener and no outbound federation, no trusted key servers, SQLite, open registration
off, a per-run registration shared secret, and rate limits raised so that a test suite
does not hit them. ``bootstrap`` registers alice (server admin), bob and carol through
the shared-secret admin API, logs alice in (her access token is the bearer token of
every call) and has the three of them talk in a few rooms, since a conversation needs
each member's own token.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import yaml

from toolbed.errors import AppStartError
from toolbed.registry import register

from ._base import LOOPBACK, Launcher, RunningApp

SERVER_NAME = "localhost"

# generous limits: a rollback test sends hundreds of messages, joins and invites quickly
_FAST = {"per_second": 1000, "burst_count": 1000}
_RATE_LIMITS: dict[str, Any] = {
    "rc_message": _FAST,
    "rc_registration": _FAST,
    "rc_login": {"address": _FAST, "account": _FAST, "failed_attempts": _FAST},
    "rc_admin_redaction": _FAST,
    "rc_joins": {"local": _FAST, "remote": _FAST},
    "rc_joins_per_room": _FAST,
    "rc_invites": {"per_room": _FAST, "per_user": _FAST, "per_issuer": _FAST},
    "rc_3pid_validation": _FAST,
    "rc_room_creation": _FAST,
    "rc_presence": {"per_user": _FAST},
    "rc_delayed_event_mgmt": _FAST,
    "rc_reports": _FAST,
    "rc_user_directory": _FAST,
    "rc_profile": _FAST,
    "rc_media_create": _FAST,
}

_LOG_CONFIG = """\
version: 1
formatters:
  plain:
    format: '%(asctime)s %(levelname)s %(name)s %(message)s'
handlers:
  console:
    class: logging.StreamHandler
    formatter: plain
root:
  level: WARNING
  handlers: [console]
disable_existing_loggers: false
"""

# the people toolbed creates; alice is the one whose token the catalog calls with
_PEOPLE = {
    "alice": "Alice Chen",
    "bob": "Bob Okafor",
    "carol": "Carol Diaz",
}


@register("launcher", "synapse")
class SynapseLauncher(Launcher):
    package = "matrix-synapse"
    health_path = "/health"
    start_timeout = 120.0
    issues_token = True  # alice's access token only exists once the server runs

    def configure(self, data_dir: Path, port: int, env: dict[str, str]) -> list[str]:
        python = str(self.bin_dir / "python")
        config = data_dir / "homeserver.yaml"
        self.setup_command(
            [python, "-m", "synapse.app.homeserver", "--server-name", SERVER_NAME,
             "--config-path", str(config), "--data-directory", str(data_dir),
             "--generate-config", "--report-stats=no"],
            data_dir, "generating its config",
        )
        hs = yaml.safe_load(config.read_text())
        log_config = data_dir / "log.yaml"
        log_config.write_text(_LOG_CONFIG)
        self._shared_secret = secrets.token_urlsafe(32)
        hs.update({
            "listeners": [{
                "port": port,
                "bind_addresses": [LOOPBACK],
                "type": "http",
                "tls": False,
                "x_forwarded": False,
                # the client resource also serves /_synapse/admin; no federation resource
                "resources": [{"names": ["client"], "compress": False}],
            }],
            "database": {"name": "sqlite3", "args": {"database": str(data_dir / "homeserver.db")}},
            "log_config": str(log_config),
            "media_store_path": str(data_dir / "media_store"),
            "registration_shared_secret": self._shared_secret,
            "macaroon_secret_key": secrets.token_urlsafe(32),
            "form_secret": secrets.token_urlsafe(32),
            "enable_registration": False,
            "report_stats": False,
            "enable_metrics": False,
            "url_preview_enabled": False,
            # no federation in or out, no key servers, no phoning home
            "trusted_key_servers": [],
            "suppress_key_server_warning": True,
            "federation_domain_whitelist": [],
            "federation_sender_instances": [],
            "allow_public_rooms_over_federation": False,
            "serve_server_wellknown": False,
            # let the people find each other and publish rooms in the directory
            "user_directory": {"enabled": True, "search_all_users": True},
            "room_list_publication_rules": [{"action": "allow"}],
            "alias_creation_rules": [{"action": "allow"}],
            # MSC3391: setting account data to {} removes it, so an undo can remove it
            "experimental_features": {"msc3391_enabled": True},
            # a /sync answer is otherwise re-served for 2 minutes: reads must be fresh
            "caches": {"sync_response_cache_duration": 0},
            **_RATE_LIMITS,
        })
        config.write_text(yaml.safe_dump(hs, sort_keys=False))
        config.chmod(0o600)
        return [python, "-m", "synapse.app.homeserver", "--config-path", str(config)]

    def process_env(self, data_dir: Path) -> dict[str, str]:
        return {"SYNAPSE_CACHE_FACTOR": "0.5"}

    def ready(self, running: RunningApp) -> None:
        """Wait until the user directory lists the other people.

        Synapse fills its user directory in a background task after registration; a
        search made before then finds nobody, so a task that looks someone up would
        depend on how soon after the start it runs.
        """
        headers = {"Authorization": f"Bearer {running.env[self.token_env]}"}
        others = {f"@{name}:localhost" for name in _PEOPLE if name != "alice"}
        with httpx.Client(base_url=running.base_url, headers=headers, timeout=5) as client:
            def pending() -> str | None:
                found = client.post("/_matrix/client/v3/user_directory/search",
                                    json={"search_term": "localhost", "limit": 10})
                names = {u.get("user_id") for u in found.json().get("results", [])} \
                    if found.status_code == 200 else set()
                return None if others <= names else \
                    f"the user directory still lists only {sorted(names)}"
            self.wait_until(running, pending)

    # -- bootstrap ------------------------------------------------------------------------

    def bootstrap(self, base_url: str, env: dict[str, str]) -> None:
        # bearer auth: alice's access token only exists once the server runs
        self._passwords: dict[str, str] = {}
        with httpx.Client(base_url=base_url, timeout=30) as client:
            tokens = {
                name: self._register(client, name, display, admin=(name == "alice"))
                for name, display in _PEOPLE.items()
            }
            # alice's own session, the one toolbed calls with (a named device)
            response = client.post("/_matrix/client/v3/login", json={
                "type": "m.login.password",
                "identifier": {"type": "m.id.user", "user": "alice"},
                "password": self._passwords["alice"],
                "initial_device_display_name": "toolbed agent",
            })
            _check(response, "logging alice in")
            env[self.token_env] = response.json()["access_token"]
            # the session registration opened stands for alice's phone
            phone = client.get("/_matrix/client/v3/account/whoami",
                               headers={"Authorization": f"Bearer {tokens['alice']}"})
            _check(phone, "reading alice's first device")
            renamed = client.put(
                f"/_matrix/client/v3/devices/{quote(phone.json()['device_id'], safe='')}",
                json={"display_name": "Alice's phone"},
                headers={"Authorization": f"Bearer {tokens['alice']}"},
            )
            _check(renamed, "naming alice's first device")
            _Conversation(client, tokens).run()

    def _register(self, client: httpx.Client, name: str, display: str, *, admin: bool) -> str:
        password = self._passwords[name] = secrets.token_urlsafe(18)
        nonce = client.get("/_synapse/admin/v1/register")
        _check(nonce, "asking for a registration nonce")
        mac = hmac.new(self._shared_secret.encode(), digestmod=hashlib.sha1)
        for part in (nonce.json()["nonce"], name, password):
            mac.update(part.encode())
            mac.update(b"\x00")
        mac.update(b"admin" if admin else b"notadmin")
        response = client.post("/_synapse/admin/v1/register", json={
            "nonce": nonce.json()["nonce"], "username": name, "password": password,
            "displayname": display, "admin": admin, "mac": mac.hexdigest(),
        })
        _check(response, f"registering {name}")
        return response.json()["access_token"]


class _Conversation:
    """Rooms where alice, bob and carol have already talked, each with their own token."""

    def __init__(self, client: httpx.Client, tokens: dict[str, str]):
        self.client, self.tokens = client, tokens

    def call(self, who: str, method: str, path: str, body: Any = None) -> dict[str, Any]:
        response = self.client.request(
            method, "/_matrix/client/v3" + path, json=body,
            headers={"Authorization": f"Bearer {self.tokens[who]}"},
        )
        _check(response, f"seeding ({who} {method} {path.split('?')[0]})")
        return response.json()

    def room(self, who: str, **body: Any) -> str:
        return self.call(who, "POST", "/createRoom", body)["room_id"]

    def join(self, who: str, room: str) -> None:
        self.call(who, "POST", f"/join/{_q(room)}", {})

    def say(self, who: str, room: str, text: str) -> str:
        txn = uuid.uuid4().hex
        path = f"/rooms/{_q(room)}/send/m.room.message/{txn}"
        return self.call(who, "PUT", path, {"msgtype": "m.text", "body": text})["event_id"]

    def run(self) -> None:
        general = self.room(
            "alice", preset="public_chat", visibility="public", room_alias_name="general",
            name="General", topic="Team-wide announcements and everyday chat",
        )
        random = self.room(
            "alice", preset="public_chat", visibility="public", room_alias_name="random",
            name="Random", topic="Off-topic: links, lunch plans, pets",
        )
        book_club = self.room(
            "bob", preset="public_chat", visibility="public", room_alias_name="book-club",
            name="Book Club", topic="This month: The Left Hand of Darkness",
        )
        for who in ("bob", "carol"):
            self.join(who, general)
        self.join("carol", random)
        self.join("carol", book_club)
        self.say("alice", general, "Welcome to the team space! Announcements go here.")
        self.say("bob", general, "Thanks Alice. Reminder: the quarterly planning meeting "
                 "is on Thursday at 10:00 in room 4B.")
        self.say("carol", general, "I'll bring the budget numbers for Q3.")
        self.say("alice", general, "Great. Please post your agenda items before Wednesday.")
        self.say("carol", random, "Anyone up for tacos at the food truck today?")
        self.say("alice", random, "Count me in, 12:30?")
        self.say("bob", book_club, "Chapter 5 discussion on Friday, no spoilers please!")
        self.say("carol", book_club, "I'm only halfway through, will catch up by then.")


def _q(value: str) -> str:
    return quote(value, safe="")


def _check(response: httpx.Response, doing: str) -> None:
    if response.status_code >= 300:
        raise AppStartError(
            f"synapse started but {doing} failed: HTTP {response.status_code} "
            f"{response.text[:300]}"
        )

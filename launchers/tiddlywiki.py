"""TiddlyWiki: a personal wiki of small notes ("tiddlers"), served by its Node.js server."""

from __future__ import annotations

from pathlib import Path

from toolbed.registry import register

from ._base import LOOPBACK, NpmLauncher

# lets the HTTP API take any filter (by default only a fixed list is allowed)
_ALLOW_FILTERS = "title: $:/config/Server/AllowAllExternalFilters\n\nyes"


@register("launcher", "tiddlywiki")
class TiddlyWikiLauncher(NpmLauncher):
    package = "tiddlywiki"
    health_path = "/status"
    user = "alice"

    def configure(self, data_dir: Path, port: int, env: dict[str, str]) -> list[str]:
        node = "node"
        script = str(self.node_modules / "tiddlywiki" / "tiddlywiki.js")
        wiki = data_dir / "wiki"
        self.setup_command([node, script, str(wiki), "--init", "server"], data_dir,
                           "creating the wiki folder")
        (wiki / "tiddlers").mkdir(exist_ok=True)
        (wiki / "tiddlers" / "AllowAllExternalFilters.tid").write_text(_ALLOW_FILTERS)
        users = wiki / "users.csv"
        users.write_text(f"username,password\n{self.user},{self.password(env)}\n")
        users.chmod(0o600)
        return [
            node, script, str(wiki), "--listen", f"host={LOOPBACK}", f"port={port}",
            f"credentials={users}", "readers=(authenticated)", "writers=(authenticated)",
        ]

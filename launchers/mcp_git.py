"""The MCP reference git server over a small repository toolbed lays out in the data
dir (``repo/``): a pantry-tracking script with a few months of history by two people,
a feature branch, a change not yet staged and a file not yet tracked. The commits'
authors and dates are fixed, so every start makes the same commit hashes."""

from __future__ import annotations

from pathlib import Path

from toolbed.registry import register

from ._mcpserver import McpLauncher

_PEOPLE = {"maya": ("Maya Okafor", "maya@pantry.example"),
           "tomas": ("Tomás Reyes", "tomas@pantry.example")}

_HISTORY: list[tuple[str, str, str, dict[str, str]]] = [
    # (who, when, message, files written)
    ("maya", "2026-03-02T09:15:00+01:00", "Start the pantry tracker", {
        "README.md": "# Pantry\n\nTrack what is in the kitchen cupboards.\n",
        "pantry.py": "ITEMS = {}\n\n\ndef add(name, count=1):\n"
                     "    ITEMS[name] = ITEMS.get(name, 0) + count\n",
    }),
    ("tomas", "2026-03-09T18:40:00+01:00", "Add a function to use up items", {
        "pantry.py": "ITEMS = {}\n\n\ndef add(name, count=1):\n"
                     "    ITEMS[name] = ITEMS.get(name, 0) + count\n\n\n"
                     "def use(name, count=1):\n"
                     "    ITEMS[name] = max(0, ITEMS.get(name, 0) - count)\n",
    }),
    ("maya", "2026-04-14T07:55:00+02:00", "Write tests for add and use", {
        "test_pantry.py": "from pantry import ITEMS, add, use\n\n\ndef test_add_then_use():\n"
                          "    add('rice', 2)\n    use('rice')\n    assert ITEMS['rice'] == 1\n",
    }),
    ("tomas", "2026-05-21T21:05:00+02:00", "List items that are running low", {
        "pantry.py": "ITEMS = {}\nLOW = 2\n\n\ndef add(name, count=1):\n"
                     "    ITEMS[name] = ITEMS.get(name, 0) + count\n\n\n"
                     "def use(name, count=1):\n"
                     "    ITEMS[name] = max(0, ITEMS.get(name, 0) - count)\n\n\n"
                     "def running_low():\n"
                     "    return sorted(n for n, c in ITEMS.items() if c < LOW)\n",
    }),
    ("maya", "2026-06-30T12:00:00+02:00", "Explain how to run the tests", {
        "README.md": "# Pantry\n\nTrack what is in the kitchen cupboards.\n\n"
                     "Run the tests with `pytest`.\n",
    }),
]

_BRANCH = ("shopping-list", "tomas", "2026-07-08T19:30:00+02:00",
           "Draft a shopping list from the low items", {
               "shopping.py": "from pantry import running_low\n\n\ndef shopping_list():\n"
                              "    return [f'- {name}' for name in running_low()]\n",
           })


@register("launcher", "git")
class GitLauncher(McpLauncher):
    executable = "mcp-server-git"

    def server_cwd(self, data_dir: Path) -> Path:
        return data_dir / "repo"

    def server_command(self, data_dir: Path) -> list[str]:
        return [str(self.server_path()), "--repository", str(self.server_cwd(data_dir))]

    def prepare(self, data_dir: Path) -> None:
        repo = self.server_cwd(data_dir)
        repo.mkdir(parents=True, exist_ok=True)
        self._git(repo, "init", "--quiet", "--initial-branch=main")
        self._git(repo, "config", "user.name", "Sam Lee")     # who commits through the tools
        self._git(repo, "config", "user.email", "sam@pantry.example")
        for who, when, message, files in _HISTORY:
            self._commit(repo, who, when, message, files)
        branch, who, when, message, files = _BRANCH
        self._git(repo, "checkout", "--quiet", "-b", branch)
        self._commit(repo, who, when, message, files)
        self._git(repo, "checkout", "--quiet", "main")
        (repo / "README.md").write_text(                     # a change not yet staged
            (repo / "README.md").read_text() + "\nSee TODO.md for what is next.\n")
        (repo / "TODO.md").write_text("- expiry dates\n- a weekly report\n")  # untracked

    def _commit(self, repo: Path, who: str, when: str, message: str,
                files: dict[str, str]) -> None:
        for name, text in files.items():
            (repo / name).write_text(text)
        self._git(repo, "add", *files)
        name, email = _PEOPLE[who]
        self._git(repo, "commit", "--quiet", "-m", message, env={
            "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": when,
            "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email,
            "GIT_COMMITTER_DATE": when})

    def _git(self, repo: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.setup_command(["git", *args], repo, f"git {args[0]}", env={
            "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", **(env or {})})

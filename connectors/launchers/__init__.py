"""Launchers of the self-hosted apps: one module per app, registered by name."""

from . import kinto, radicale  # noqa: F401  (each module registers its launcher)
from ._base import (
    Launcher,
    RunningApp,
    forget_running,
    free_port,
    get_launcher,
    launch,
    launcher_names,
    process_alive,
    running_apps,
    save_running,
    stop_app,
)

__all__ = [
    "Launcher",
    "RunningApp",
    "forget_running",
    "free_port",
    "get_launcher",
    "launch",
    "launcher_names",
    "process_alive",
    "running_apps",
    "save_running",
    "stop_app",
]

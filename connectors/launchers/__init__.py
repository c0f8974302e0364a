"""Launchers of the self-hosted apps: one module per app, registered by name."""

import importlib
import pkgutil

from .._running import (
    RunningApp,
    damaged_records,
    forget_running,
    own,
    process_alive,
    process_started,
    reap_orphans,
    running_apps,
    save_running,
    stop_app,
)
from ._base import (
    Launcher,
    NpmLauncher,
    free_port,
    get_launcher,
    launch,
    launcher_names,
    restart_app,
)

__all__ = [
    "Launcher",
    "NpmLauncher",
    "RunningApp",
    "damaged_records",
    "forget_running",
    "free_port",
    "get_launcher",
    "launch",
    "launcher_names",
    "own",
    "process_alive",
    "process_started",
    "reap_orphans",
    "restart_app",
    "running_apps",
    "save_running",
    "stop_app",
]

# each module registers its launcher; a new app is a new module here, nothing else
for _module in pkgutil.iter_modules(__path__):
    if not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")

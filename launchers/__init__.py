"""Launchers of the self-hosted apps: install, start on 127.0.0.1 with per-run
credentials, seed, restart and stop; one module per app, registered by name.

    >>> from toolbed.launchers import launch
    >>> from toolbed.connectors import Runtime
    >>> with launch("kinto") as kinto, Runtime(apps={"kinto": kinto}) as rt:
    ...     rt.call("kinto.get_server_info").status
    200

The records of running apps (``RunningApp``, ``running_apps``, ``save_running``,
``stop_app``, whether a process is alive) belong to ``toolbed.connectors``, which reads
them to reach the apps; the launchers here write them."""

import importlib
import pkgutil

from ._base import (
    Launcher,
    NpmLauncher,
    free_port,
    get_launcher,
    launch,
    launcher_names,
    restart_app,
    restart_recorded,
)

__all__ = [
    "Launcher",
    "NpmLauncher",
    "free_port",
    "get_launcher",
    "launch",
    "launcher_names",
    "restart_app",
    "restart_recorded",
]

# each module registers its launcher; a new app is a new module here, nothing else
for _module in pkgutil.iter_modules(__path__):
    if not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")

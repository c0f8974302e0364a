"""Every error toolbed raises on purpose, in one tree.

A user can cause each of these (a bad YAML file, a wrong argument, an app that is
not installed, a cassette that is missing); each message names the thing at fault
and the fix. The CLI prints the message and exits 1, with no traceback.

* ToolbedError
  + CatalogError            -- a catalog YAML file is malformed or inconsistent
    x SpecError             -- an OpenAPI document toolbed cannot read
  + TaskError               -- a task file is malformed, or a task disagrees with the catalog
  + UnknownApiError         -- an API id (or app name) that is not in the catalog
  + ConnectorError
    x ArgumentError         -- arguments break the API's JSON Schema; nothing was sent
    x UnsafeArgumentError   -- a value would leave the API's path (``../``, ``http://``)
    x CredentialError       -- an env var that the API's auth needs is not set
    x TransportError        -- the app could not be reached (after retries)
    x AppNotRunningError    -- a self-hosted app has no running instance
  + CassetteError
    x CassetteNotFoundError -- replay asked for a cassette file that does not exist
    x ReplayMissError       -- replay met a request with no recorded response
  + AppError
    x AppNotInstalledError  -- ``toolbed apps install NAME`` was not run
    x AppInstallError       -- installing an app failed (registry unreachable, ...)
    x AppStartError         -- an app did not become healthy
  + RollbackError
    x IrreversibleWriteError -- a write with no undo, refused without --allow-irreversible
    x JournalError          -- the rollback journal cannot be opened or read
  + RetrieverError          -- a tool index, model or dataset the retriever cannot use
  + AgentError              -- no model is configured, or the configured one cannot load
  + ClusterError            -- a Ray cluster that cannot be reached or joined
"""

from __future__ import annotations

__all__ = [
    "AgentError",
    "AppError",
    "AppInstallError",
    "AppNotInstalledError",
    "AppNotRunningError",
    "AppStartError",
    "ArgumentError",
    "CassetteError",
    "CassetteNotFoundError",
    "CatalogError",
    "ClusterError",
    "ConnectorError",
    "CredentialError",
    "IrreversibleWriteError",
    "JournalError",
    "ReplayMissError",
    "RetrieverError",
    "RollbackError",
    "RunLogError",
    "SpecError",
    "TaskError",
    "ToolbedError",
    "TransportError",
    "UnknownApiError",
    "UnsafeArgumentError",
]


class ToolbedError(Exception):
    "Base class of every error toolbed raises on purpose."


class CatalogError(ToolbedError):
    "A catalog YAML file is malformed or inconsistent."


class SpecError(CatalogError):
    "An OpenAPI document cannot be read (not OpenAPI, a reference that points at nothing)."


class TaskError(ToolbedError):
    "A task file is malformed, or a task disagrees with the catalog."


class RunLogError(TaskError):
    "A run folder this toolbed cannot read or add to (another format, or not a run)."


class UnknownApiError(ToolbedError, KeyError):
    "An API id or app name that is not in the catalog."

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class ConnectorError(ToolbedError):
    "A call could not be made."


class ArgumentError(ConnectorError):
    "Arguments break the API's JSON Schema; no request was sent."

    def __init__(self, message: str, errors: list[dict[str, str]] | None = None):
        super().__init__(message)
        self.errors = errors or []


class UnsafeArgumentError(ArgumentError):
    "A value would change the request's origin or leave the API's path."


class CredentialError(ConnectorError):
    "An environment variable that the API's auth needs is not set."


class TransportError(ConnectorError):
    "The app could not be reached, even after retries."


class AppNotRunningError(ConnectorError):
    "A self-hosted app has no running instance to call."


class CassetteError(ToolbedError):
    "A cassette could not be used."


class CassetteNotFoundError(CassetteError, FileNotFoundError):
    "Replay asked for a cassette file that does not exist."


class ReplayMissError(CassetteError):
    "Replay met a request that the cassette has no recording for."


class AppError(ToolbedError):
    "A self-hosted app could not be installed, started or stopped."


class AppNotInstalledError(AppError):
    "The app has not been installed yet."


class AppInstallError(AppError):
    "Installing an app failed."


class AppStartError(AppError):
    "An app did not start or did not become healthy."


class RollbackError(ToolbedError):
    "Rollback could not journal, refuse or undo a write."


class IrreversibleWriteError(RollbackError):
    "A write API with no undo was called without ``allow_irreversible``; nothing was sent."


class JournalError(RollbackError):
    "The rollback journal cannot be opened or read."


class RetrieverError(ToolbedError):
    "A tool index, embedding model or evaluation dataset the retriever cannot use."


class ClusterError(ToolbedError):
    "A Ray cluster that cannot be reached or joined, or whose workers will not start."


class AgentError(ToolbedError):
    "No agent model is configured, or the configured one cannot be loaded or reached."

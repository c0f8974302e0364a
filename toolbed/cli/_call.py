"""``toolbed call app.api --args '{...}'``: one call, printed as an observation."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from toolbed.connectors import Runtime
from toolbed.errors import ToolbedError

from ._output import CassetteOpt, ModeOpt


def parse_args_json(text: str) -> dict:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ToolbedError(
            f"--args is not valid JSON ({exc}); e.g. --args '{{\"id\": \"x\"}}'"
        ) from None
    if not isinstance(value, dict):
        raise ToolbedError("--args must be a JSON object, e.g. --args '{\"id\": \"x\"}'")
    return value


def call(
    api_id: Annotated[str, typer.Argument(help="API id, e.g. kinto.list_buckets.")],
    args: Annotated[str, typer.Option("--args", help="Arguments as a JSON object.")] = "{}",
    mode: ModeOpt = "live",
    cassette: CassetteOpt = None,
) -> None:
    """Call one API and print the observation as JSON."""
    arguments = parse_args_json(args)
    with Runtime(mode=mode, cassette=cassette) as runtime:
        observation = runtime.call(api_id, arguments)
    typer.echo(observation.model_dump_json(indent=2))

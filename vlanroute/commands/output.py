"""`--json` and `--quiet` for every command: what goes to stdout, what to stderr.

The convention (docs/json.md): with `--json` a command prints exactly one JSON object on
stdout whose first key is `"schema": "vlanroute-<command>/<version>"`; its human text is not
printed and warnings go to stderr. A user error under `--json` still prints one object, of
schema `vlanroute-error/1`, so a script can always parse stdout. `--quiet` prints only
warnings and errors (stderr). Each command's schema is a JSON Schema file in
vlanroute/schemas/ (loaded by `vlanroute.schemas.load`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
import json
from typing import Any, Protocol

import click

VERSION = 1
ERROR_SCHEMA = f"vlanroute-error/{VERSION}"

# Set by the --json option's callback for the command that is running, so that the runner
# (vlanroute.commands.runner) reports a user error as a JSON object too.
_json_mode: list[bool] = [False]


def schema_name(command: str) -> str:
    return f"vlanroute-{command}/{VERSION}"


def json_mode() -> bool:
    return _json_mode[0]


def reset() -> None:
    _json_mode[0] = False


def _remember(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    if value:
        _json_mode[0] = True
    return value


def json_option(f: Callable[..., Any] | None = None, *, doc: str = "docs/json.md") -> Any:
    """The --json flag; `@json_option` or `@json_option(doc="docs/push.md")` (where the
    schema is explained). Every command's --json goes through here, so that a user error
    under it is reported as a `vlanroute-error/1` object too."""
    option = click.option("--json", "as_json", is_flag=True, callback=_remember,
                          help=f"Print one JSON object on stdout instead of text ({doc}); "
                               "warnings still go to stderr.")
    return option(f) if f is not None else option


QUIET_HELP = "Print nothing but warnings and errors (on stderr)."


def quiet_option(f: Callable[..., Any] | None = None, *, help: str = QUIET_HELP) -> Any:
    """The -q/--quiet flag; `@quiet_option` or `@quiet_option(help=...)` for a command whose
    stdout is its product (docs/json.md says what quiet keeps there)."""
    option = click.option("-q", "--quiet", is_flag=True, help=help)
    return option(f) if f is not None else option


def document(command: str, payload: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON object of `command`: the schema key first, then the payload."""
    data: dict[str, Any] = {"schema": schema_name(command)}
    data.update(payload)
    return data


def emit(command: str, payload: Mapping[str, Any]) -> None:
    click.echo(json.dumps(document(command, payload), indent=1, default=str))


class JsonDocument(Protocol):
    """A command's --json object built by a pydantic model (vlanroute/schemas/outputs.py)."""

    def to_json(self) -> dict[str, object]: ...


def emit_document(doc: JsonDocument) -> None:
    """Print a model-built --json object: its schema file is generated from the model."""
    click.echo(json.dumps(doc.to_json(), indent=1, default=str))


def emit_error(message: str, exit_code: int) -> None:
    # Built from the model its schema file is generated from (vlanroute/bundle/schemagen.py);
    # imported here so that a command's happy path does not load pydantic for it.
    from vlanroute.schemas.documents import ErrorDocument

    emit_document(ErrorDocument(error=message, exit_code=exit_code))          # schema: ERROR_SCHEMA


class Say:
    """Human output of one command run: lines on stdout unless --json or --quiet; warnings
    and notes on stderr (notes are dropped by --quiet)."""

    def __init__(self, as_json: bool = False, quiet: bool = False) -> None:
        self.as_json, self.quiet = as_json, quiet

    @property
    def human(self) -> bool:
        return not self.as_json and not self.quiet

    def line(self, text: str) -> None:
        if self.human:
            click.echo(text)

    def note(self, text: str) -> None:
        if not self.quiet:
            click.echo(text, err=True)

    def warn(self, text: str) -> None:
        click.echo(f"warning: {text}", err=True)


class SwitchOutcome(Protocol):
    """How one switch ended (push's SwitchResult, save's and rollback's FabricResult)."""
    switch: str
    result: str
    message: str


def report_failures(results: Iterable[SwitchOutcome], good: Collection[str]) -> None:
    """When the results table is not printed (--quiet, or --json for push): each switch that
    did not end well is still an error, one line on stderr."""
    for r in results:
        if r.result not in good:
            click.echo(f"{r.switch}: {r.result}: {r.message}", err=True)

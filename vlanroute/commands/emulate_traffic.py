"""`vlanroute emulate OUTDIR --traffic PATTERNS`: measured TCP throughput against the flow
model (vlanroute/emulate/traffic.py), in this kernel or in the VM."""

from __future__ import annotations

import json
from pathlib import Path

import click

from vlanroute.commands.output import emit
from vlanroute.emulate.traffic import TrafficOptions, run_traffic, run_traffic_in_vm
from vlanroute.exitcodes import ExitCode
from vlanroute.perf.patterns import PATTERNS


def run(outdir: Path, where: str, traffic: str, rate: float, seconds: float, warmup: float, seed: int, queue: str,
        stp: bool,
        timeout_s: float, json_report: Path | None, as_json: bool, quiet: bool) -> int:
    patterns = tuple(p.strip() for p in traffic.split(",") if p.strip())
    for p in patterns:
        if p not in PATTERNS and not Path(p).is_file():
            raise click.BadParameter(f"{p!r} is neither a pattern ({', '.join(PATTERNS)}) nor a flows file",
                                     param_hint="--traffic")
    opt = TrafficOptions(patterns=patterns, rate_mbit=rate, warmup_s=warmup, seconds=seconds, seed=seed, stp=stp,
                         queue=queue)

    def log(line: str) -> None:
        if not quiet:
            click.echo(line, err=True)
    if where == "host":
        report = run_traffic(outdir, opt, log)
    else:
        report = run_traffic_in_vm(outdir, opt, timeout_s, log)
    if json_report is not None:
        json_report.write_text(json.dumps(report.to_json(), indent=1) + "\n")
    if as_json:
        emit("emulate-traffic", report.to_json())
    elif not quiet:
        click.echo(report.text())
    if report.aborted:
        click.echo(f"emulate: aborted: {report.aborted}", err=True)
        return ExitCode.FAILED_CHECK
    return ExitCode.OK

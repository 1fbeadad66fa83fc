"""`vlanroute emulate OUTDIR`: run a rendered linux-bridge network on a real 802.1Q data plane."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click

from vlanroute.emulate.run import Options, host_kernel_capable, run_here, run_in_vm
from vlanroute.emulate.spec import load, preload
from vlanroute.errors import UserError
from vlanroute.bundle.manifest import require_intact
from vlanroute.commands.output import emit, json_option, quiet_option
from vlanroute.commands.runner import run_command
from vlanroute.exitcodes import ExitCode

if TYPE_CHECKING:
    from vlanroute.emulate.failplan import Failure


@click.command("emulate")
@click.argument("outdir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--kernel", "where", type=click.Choice(["auto", "host", "vm"]), default="auto",
              show_default=True,
              help="host: namespaces in this kernel; vm: boot the Debian kernel under QEMU; "
                   "auto: host when it has bridge VLAN filtering and 802.1Q, else vm.")
@click.option("--frames-per-pair", type=click.IntRange(1, 100), default=1, show_default=True,
              help="UDP datagrams per ordered host pair in the traffic check.")
@click.option("--host-tools", type=click.Choice(["busybox", "system"]), default="busybox", show_default=True,
              help="What runs hosts/vlanroute-host: busybox sh with busybox ping (a minimal compute image, "
                   "and fast under QEMU), or /bin/sh with this system's ping.")
@click.option("--host-frame", type=click.Choice(["auto", "ping", "arp"]), default="auto", show_default=True,
              help="The learning frame the hosts send (vlanroute-host --frame).")
@click.option("--host-rp-filter", type=click.IntRange(0, 2), default=1, show_default=True,
              help="net.ipv4.conf.{all,default}.rp_filter of every host at the start (1: strict, as "
                   "several distributions set it; trunk-attached hosts need loose on their sub-interfaces).")
@click.option("--host-sysctls", type=click.Choice(["apply", "skip"]), default="apply", show_default=True,
              help="skip: after the host program, put the trunk hosts' sub-interfaces back to the start "
                   "rp_filter, to see the traffic fail without the program's sysctls (docs/emulate.md).")
@click.option("--check-wait", type=click.FloatRange(1, 600), default=60, show_default=True,
              help="Seconds the UDP check waits for datagrams still missing, and the TCP check for its "
                   "exchanges: generous for a busy machine under QEMU TCG; lower it when pairs are meant "
                   "to fail (a rehearsal of a broken bundle), which otherwise wait it out.")
@click.option("--timeout", "timeout_s", type=click.FloatRange(30, 7200), default=1200, show_default=True,
              help="Seconds before the VM is killed (vm only).")
@click.option("--json-report", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the report as JSON to this file.")
@click.option("--skip-manifest-check", is_flag=True,
              help="Run a bundle that differs from what render wrote (manifest.json): its host "
                   "scripts run as root in the namespaces.")
@click.option("--fail-pair", default=None, metavar="SW1:SW2",
              help="Failure scenario: after the healthy checks, cut every cable of this neighbour pair, "
                   "check that exactly the predicted host pairs are cut, apply --repair and check again "
                   "(docs/emulate.md).")
@click.option("--fail-switch", default=None, metavar="SW",
              help="Failure scenario: as --fail-pair, but the whole switch stops (every cable and host link "
                   "of it down, its hosts lost).")
@click.option("--repair", "repair_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="With --fail-pair or --fail-switch: the bundle `vlanroute repair` wrote for that failure.")
@click.option("--transition-to", "transition_dirs", type=click.Path(file_okay=False, path_type=Path), multiple=True,
              help="Transition scenario: after the healthy checks, change the bridges to this bundle of the same "
                   "fabric (another engine, a repair, and back: repeat the option) step by step as push would, "
                   "with traffic running; check no storm and every pair not declared cut delivered "
                   "(docs/emulate.md).")
@click.option("--relearn-with", "relearn", type=click.Choice(["program", "frames"]), default="program",
              show_default=True,
              help="The failure scenario's re-learning: program (hosts/relearn.sh: the host program with "
                   "--vlans on every host) or frames (one learning frame per host and VLAN from one process, "
                   "much faster under QEMU TCG; docs/emulate.md).")
@click.option("--traffic", default=None, metavar="PATTERNS",
              help="Instead of the checks: measure TCP throughput of these patterns (comma-separated: all-to-all, "
                   "permutation, neighbour, bisection, a flows file) against the flow model, on the plan and on "
                   "802.1D spanning-tree bridges over the same cables (docs/emulate.md).")
@click.option("--traffic-rate", type=click.FloatRange(0.1, 1000), default=2.0, show_default=True,
              help="Mbit/s every cable and host link is shaped to (tc tbf).")
@click.option("--traffic-seconds", type=click.FloatRange(1, 600), default=4.0, show_default=True,
              help="Seconds each pattern is measured, after the warm-up.")
@click.option("--traffic-warmup", type=click.FloatRange(0, 60), default=2.0, show_default=True,
              help="Seconds each pattern runs before the measurement.")
@click.option("--traffic-seed", type=click.IntRange(0), default=1, show_default=True,
              help="The random permutation's seed.")
@click.option("--traffic-queue", type=click.Choice(["fifo", "sfq"]), default="fifo", show_default=True,
              help="The queue inside each link's tbf: fifo (as a switch port) or sfq (per-flow fair queueing).")
@click.option("--traffic-no-stp", is_flag=True, help="Measure the plan only, not the spanning-tree network.")
@json_option
@quiet_option
@click.option("--vm-kernel-label", default=None, hidden=True)
# Inside the VM of run_in_vm only: the bundles' specs, loaded on the host (spec.preload), and
# the --json-report written as plain fields for the host to check.
@click.option("--in-vm-specs", type=click.Path(dir_okay=False, path_type=Path), default=None, hidden=True)
def command(outdir: Path, where: str, frames_per_pair: int, host_tools: str, host_frame: str,
            host_rp_filter: int, host_sysctls: str, check_wait: float, timeout_s: float, json_report: Path | None,
            skip_manifest_check: bool, fail_pair: str | None, fail_switch: str | None, repair_dir: Path | None,
            transition_dirs: tuple[Path, ...], relearn: str, traffic: str | None,
            traffic_rate: float, traffic_seconds: float, traffic_warmup: float, traffic_seed: int, traffic_queue: str,
            traffic_no_stp: bool, as_json: bool, quiet: bool, vm_kernel_label: str | None,
            in_vm_specs: Path | None) -> int:
    """Build OUTDIR's network in namespaces on the kernel's own bridge and check it.

    One namespace per switch runs switches/<switch>.cfg, one per host runs hosts/vlanroute-host,
    a veth pair stands for every cable (loops included). Checks: no broadcast storm, every
    host MAC learned in every VLAN on the planned port, UDP between every ordered host pair
    delivered, every cable carried exactly the planned frames, TCP between (sampled) host
    pairs after the ARP tables are emptied. Hosts start with rp_filter 1. Needs root.
    Exit 0 = all checks passed, 1 = a check failed, 2 = the emulation cannot run here
    (docs/exit-codes.md).
    """
    if in_vm_specs is not None:
        preload(in_vm_specs)
    load(outdir)                 # user errors in OUTDIR are reported before anything is built
    if traffic is not None and (fail_pair is not None or fail_switch is not None):
        raise UserError(f"--traffic and {'--fail-pair' if fail_pair else '--fail-switch'} are two different runs",
                        fix="measure the traffic and rehearse the failure in two emulate runs")
    failure = _failure_args(outdir, fail_pair, fail_switch, repair_dir, skip_manifest_check)
    if transition_dirs:
        if failure is not None or traffic is not None:
            raise UserError("--transition-to is a scenario of its own", field="--transition-to",
                            fix="rehearse a failure, a transition and the traffic in separate emulate runs")
        from vlanroute.emulate.transition import check_same_fabric
        for transition_dir in transition_dirs:
            check_same_fabric(load(outdir), load(transition_dir))
            if not skip_manifest_check:
                require_intact(transition_dir, "emulate", "--skip-manifest-check")
    if skip_manifest_check:
        click.secho("WARNING: --skip-manifest-check: OUTDIR's files are NOT checked against its "
                    "manifest", fg="red", bold=True, err=True)
    else:
        require_intact(outdir, "emulate", "--skip-manifest-check")
    options = Options(frames_per_pair=frames_per_pair, host_tools=host_tools, host_frame=host_frame,
                      host_rp_filter=host_rp_filter, host_sysctls=host_sysctls, relearn=relearn,
                      traffic_wait_s=check_wait, tcp_timeout_s=check_wait)
    if where != "vm" and os.geteuid() != 0:
        raise UserError("the emulation creates network namespaces and needs root",
                        fix="run it as root (sudo vlanroute emulate ...)")
    if where == "auto":
        capable, why = host_kernel_capable()
        where = "host" if capable else "vm"
        if not quiet:
            click.echo(f"kernel: {'this host' if capable else 'a VM'} ({'host kernel: ' + why})", err=True)
    if traffic is not None:
        from vlanroute.commands.emulate_traffic import run
        return run(outdir, where, traffic, traffic_rate, traffic_seconds, traffic_warmup, traffic_seed,
                   traffic_queue, not traffic_no_stp, timeout_s, json_report, as_json, quiet)
    if where == "host":
        label, say = vm_kernel_label or "this host's kernel", _drop if quiet else lambda line: click.echo(line, err=True)
        if failure is not None and repair_dir is not None:
            from vlanroute.emulate import failure as scenario
            report = scenario.run_here(outdir, repair_dir, failure, options, label, log=say)
        elif transition_dirs:
            from vlanroute.emulate import transition as moving
            report = moving.run_here(outdir, list(transition_dirs), options, label, log=say)
        else:
            report = run_here(outdir, options, label, log=say)
        if as_json:
            emit("emulate", report.to_json())
        elif not quiet:
            click.echo(report.text())
        if quiet and not report.ok:
            _say_failures(report.plain_json())
        if json_report is not None:
            plain = in_vm_specs is not None          # run_in_vm checks it on the host
            json_report.write_text(json.dumps(report.plain_json() if plain else report.to_json(), indent=1) + "\n")
        return ExitCode.OK if report.ok else ExitCode.FAILED_CHECK

    from vlanroute.emulate import vm
    missing = vm.missing_tools()
    if missing:
        raise UserError("the emulation VM cannot boot, missing: " + ", ".join(missing),
                        fix="apt-get install " + " ".join(vm.DEBIAN_PACKAGES))
    report_file = json_report
    scratch = None
    if (as_json or quiet) and report_file is None:
        import tempfile
        scratch = tempfile.TemporaryDirectory(prefix="vlanroute-emulate-json-")
        report_file = Path(scratch.name) / "report.json"
    try:
        try:
            # Under --quiet the console log is dropped; a VmError carries its last lines.
            say = _drop if quiet else lambda line: click.echo(line, err=as_json)
            if failure is not None and repair_dir is not None:
                from vlanroute.emulate import failure as scenario
                status, boot_s = scenario.run_in_vm(outdir, repair_dir, failure, options, timeout_s, report_file,
                                                    log=say)
            elif transition_dirs:
                from vlanroute.emulate import transition as moving
                status, boot_s = moving.run_in_vm(outdir, list(transition_dirs), options, timeout_s, report_file,
                                                  log=say)
            else:
                status, boot_s = run_in_vm(outdir, options, timeout_s, report_file, log=say)
        except vm.VmError as exc:
            raise UserError(f"the emulation VM could not run: {exc}",
                            fix="see the VM's log above; --kernel host runs in this kernel") from None
        if not quiet:
            click.echo(f"vm: booted in {boot_s:.1f} s; emulation exit status {status}", err=as_json)
        if quiet and status != ExitCode.OK:
            if report_file is not None and report_file.exists():
                _say_failures(json.loads(report_file.read_text()))
            else:
                click.echo(f"emulate: the emulation in the VM exited with status {status} and wrote "
                           "no report (without --quiet: the VM's log)", err=True)
        if as_json:
            if report_file is None or not report_file.exists():
                raise UserError("the emulation in the VM wrote no report", fix="see the VM's log above")
            # Read back through the model that wrote it (the schema is generated from it).
            from vlanroute.schemas.outputs import EmulateDocument
            emit("emulate", EmulateDocument.model_validate_json(report_file.read_text()).to_json())
    finally:
        if scratch is not None:
            scratch.cleanup()
    return status


def _failure_args(outdir: Path, fail_pair: str | None, fail_switch: str | None, repair_dir: Path | None,
                  skip_manifest_check: bool) -> Failure | None:
    """--fail-pair or --fail-switch goes with --repair; both bundles are checked before anything runs."""
    if fail_pair is None and fail_switch is None and repair_dir is None:
        return None
    if fail_pair is not None and fail_switch is not None:
        raise UserError("--fail-pair and --fail-switch are two different scenarios", field="--fail-switch",
                        fix="rehearse one failure per emulate run")
    if repair_dir is None or (fail_pair is None and fail_switch is None):
        raise UserError(f"{'--fail-switch' if fail_switch else '--fail-pair'} and --repair go together",
                        field="--fail-pair" if repair_dir is not None else "--repair",
                        fix="give the dead neighbour pair (or switch) and the bundle `vlanroute repair` wrote for it")
    from vlanroute.emulate.failplan import Failure, parse_pair, parse_switch, repair_delta, require_repair_of
    failure = Failure(pair=parse_pair(fail_pair)) if fail_pair else Failure(switch=parse_switch(str(fail_switch)))
    spec = load(outdir)
    failure.check(spec)
    if repair_dir.resolve() != outdir.resolve():
        repair_delta(spec, load(repair_dir), dead=failure.dead())
    require_repair_of(failure, outdir, repair_dir)
    if not skip_manifest_check:
        require_intact(repair_dir, "emulate", "--skip-manifest-check")
    return failure


def _drop(line: str) -> None:
    """--quiet: the progress lines go nowhere."""


def _say_failures(report: dict[str, object]) -> None:
    """--quiet: what failed, on stderr (the report's text form is not printed)."""
    checks = cast(list[dict[str, object]], report.get("checks") or [])
    for check in checks:
        if not check["ok"]:
            click.echo(f"emulate: FAIL: {check['name']}: {check['detail']}", err=True)
    if report.get("aborted"):
        click.echo(f"emulate: aborted: {report['aborted']}", err=True)
    if not report.get("teardown_clean"):
        click.echo(f"emulate: teardown: {report.get('teardown')}", err=True)
    click.echo("emulate: RESULT: FAIL", err=True)


if __name__ == "__main__":
    # `python -m vlanroute.commands.emulate`: how the VM runs the emulation, lean.
    sys.exit(run_command(command))

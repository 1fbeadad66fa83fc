"""`-q/--quiet` on the commands that got it with issue 17 (docs/json.md): nothing on stdout
but a command's product (the fragment of `discover` and `import ansible` without `-o`,
the `export` lines of `lab up`), only warnings and errors on stderr, and the exit code of
the same run without `-q`. With `--json` too, stdout holds the JSON object."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
import subprocess
import sys

import pytest

from push_support import build_cluster, run, set_ssh_env, wire_as_planned
from vlanroute.cli import main
from vlanroute.lab.state import PortState

REPO = Path(__file__).resolve().parent.parent
INV = REPO / "inventories"


def both(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str, str, str]:
    """Run `argv` without and with -q: (exit code, stdout, stderr, quiet stdout, quiet
    stderr); the two exit codes must be equal (only for runs that change nothing)."""
    rc, out, err = run(capsys, *argv)
    qrc, qout, qerr = run(capsys, *argv, "-q")
    assert qrc == rc, (argv, rc, qrc, err, qerr)
    return rc, out, err, qout, qerr


def test_algorithms_and_analyze(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err, qout, qerr = both(capsys, "algorithms")
    assert rc == 0 and "routing engines" in out and qout == "" and qerr == ""
    good = str(INV / "seed-ring.yaml")
    rc, out, err, qout, qerr = both(capsys, "analyze", good)
    assert rc == 0 and "seed-ring.yaml" in out and qout == "" and qerr == ""
    # An inventory without a plan: exit 2 either way, and the error still on stderr.
    rc, out, err, qout, qerr = both(capsys, "analyze", good, str(INV / "nope.yaml"))
    assert rc == 2 and qout == "" and "error:" in qerr and "nope.yaml" in qerr
    # --json wins for stdout.
    rc, out, err = run(capsys, "analyze", good, "--json", "-q")
    assert rc == 0 and json.loads(out)["schema"] == "vlanroute-analyze/1"
    rc, out, err = run(capsys, "algorithms", "--quiet", "--json")
    assert rc == 0 and json.loads(out)["schema"] == "vlanroute-algorithms/1"


ANSIBLE = """\
all:
  children:
    switches:
      hosts:
        sw1: {ansible_host: 192.0.2.11}
    compute:
      vars: {switch: sw1}
      hosts:
        node01: {mac: "00:13:c6:01:53:a7"}
        node02:
"""


def test_import_ansible_keeps_its_product(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inv = tmp_path / "hosts.yaml"
    inv.write_text(ANSIBLE)
    argv = ("import", "ansible", str(inv), "--hosts-group", "compute", "--switches-group", "switches")
    rc, out, err, qout, qerr = both(capsys, *argv)
    # stdout is the product: the same YAML with -q, nothing else on stderr.
    assert rc == 0 and "node01" in out and "sw1" in out and qout == out and qerr == ""
    # With -o the product goes to the file; -q drops the line that says so.
    made = tmp_path / "made.yaml"
    rc, out, err = run(capsys, *argv, "-o", str(made))
    assert rc == 0 and out == "" and str(made) in err
    text = made.read_text()
    made.unlink()
    rc, out, err = run(capsys, *argv, "-o", str(made), "-q")
    assert rc == 0 and out == "" and err == "" and made.read_text() == text
    # A user error is still an error, with the same exit code.
    rc, out, err, qout, qerr = both(capsys, "import", "ansible", str(inv), "--hosts-group", "nosuch")
    assert rc == 2 and qout == "" and "nosuch" in qerr


def test_emulate_quiet_prints_only_what_failed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from vlanroute.emulate.run import Check, Report
    out = tmp_path / "lb"
    assert main(["render", str(INV / "seed-ring.yaml"), "-o", str(out), "--set", "platform=linux-bridge",
                 "-q"]) == 0
    checks = [Check("no storm", True, "0 frames")]

    def fake(outdir: Path, options: object, kernel: str, log) -> Report:  # type: ignore[no-untyped-def]
        log("[build] ...")                      # the progress lines -q drops
        return Report(str(outdir), "lb", kernel, "8 switches", list(checks), {"build": 1.0},
                      teardown="clean", teardown_clean=True)

    monkeypatch.setattr("vlanroute.commands.emulate.run_here", fake)
    monkeypatch.setattr("os.geteuid", lambda: 0)
    argv = ("emulate", str(out), "--kernel", "host")
    rc, text, err, qout, qerr = both(capsys, *argv)
    assert rc == 0 and "RESULT: PASS" in text and "[build]" in err and qout == "" and qerr == ""
    checks.append(Check("fdb", False, "3 entries missing", ["sw1: VLAN 101: node001 missing"]))
    rc, text, err, qout, qerr = both(capsys, *argv)
    assert rc == 1 and "RESULT: FAIL" in text and qout == ""
    assert qerr.splitlines() == ["emulate: FAIL: fdb: 3 entries missing", "emulate: RESULT: FAIL"]


def test_switch_commands_on_fake_switches(farm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """cabling check, discover, push, save and rollback against emulated switches on
    127.0.0.x (the switches `vlanroute lab up` runs)."""
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    outdir = str(cluster.outdir)
    known = ("--known-hosts", str(cluster.known_hosts))
    targets = tmp_path / "targets.json"
    targets.write_text(json.dumps({"format": "vlanroute-targets/1", "switches": {
        n: {"host": sw.host, "port": sw.port} for n, sw in farm.switches.items()}}))

    # cabling check: the cables as planned, then two swapped.
    rc, out, err, qout, qerr = both(capsys, "cabling", "check", outdir, *known, "--targets", str(targets))
    assert rc == 0 and "cabling: OK" in out and "note:" in err
    assert qout == "" and qerr == ""                     # the target map's note is dropped too
    with (cluster.outdir / "cabling.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    isl = [r for r in rows if r["kind"] == "inter-switch" and not r["a_lag"]]
    first = isl[0]
    second = next(r for r in isl if not {r["a"], r["b"]} & {first["a"], first["b"]})
    first["b"], second["b"] = second["b"], first["b"]           # two cables' far ends swapped
    first["b_port"], second["b_port"] = second["b_port"], first["b_port"]
    swapped = tmp_path / "swapped.csv"
    with swapped.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    wire_as_planned(farm, cluster.outdir, swapped)
    rc, out, err, qout, qerr = both(capsys, "cabling", "check", outdir, *known)
    assert rc == 1 and "cabling: FAILED" in out and qout == ""
    assert qerr.startswith("cabling: FAILED: ") and len(qerr.splitlines()) == 1
    rc, out, err = run(capsys, "cabling", "check", outdir, *known, "--json", "-q")
    assert rc == 1 and json.loads(out)["ok"] is False and err == ""
    wire_as_planned(farm, cluster.outdir)

    # discover: the fragment on stdout is the product, the same with -q.
    argv = ("discover", "--targets", str(targets), *known)
    rc, out, err, qout, qerr = both(capsys, *argv)
    assert rc == 0 and out.startswith("# Discovered by") and qout == out and qerr == ""
    frag = tmp_path / "frag.yaml"
    rc, out, err = run(capsys, *argv, "-o", str(frag), "-q")
    assert rc == 0 and out == "" and err == "" and frag.read_text() == qout

    # push, then rollback --dry-run (changes nothing: both runs see the same fabric).
    before = {n: sw.running_config() for n, sw in farm.switches.items()}
    rc, out, err = run(capsys, "push", outdir, *known, "--yes", "--no-save", "-q")
    assert rc == 0 and out == "", err
    assert "cabling:" not in err, err                    # the all-good cabling line is not for -q
    rc, out, err, qout, qerr = both(capsys, "rollback", outdir, *known, "--dry-run")
    assert rc == 0 and "would-restore" in out and qout == "" and qerr == ""

    # save: a switch changed since the push is not saved (exit 3, partial); -q names it.
    cluster.switch("leaf2").state.ports["1/g20"] = PortState(mode="general", pvid=1, untagged={1})
    rc, out, err = run(capsys, "save", outdir, *known, "-q")
    assert rc == 3 and out == ""
    assert [line.split(":")[:2] for line in err.splitlines()] == [["leaf2", " not-saved"]], err
    # Now only leaf2 is left unsaved, and it still fails: the same exit code both ways.
    rc, out, err, qout, qerr = both(capsys, "save", outdir, *known)
    assert rc == 1 and "leaf2" in out and qout == "" and qerr.startswith("leaf2: not-saved:")

    # rollback: every switch back to its backup. Once there, a rollback again restores
    # the same configs, so both runs (with and without -q) start from the same fabric.
    rc, out, err = run(capsys, "rollback", outdir, *known, "--yes", "-q")
    assert rc == 0 and out == "" and err == ""
    assert {n: sw.running_config() for n, sw in farm.switches.items()} == before
    rc, out, err, qout, qerr = both(capsys, "rollback", outdir, *known, "--yes")
    assert rc == 0 and "restored" in out and qout == "" and qerr == ""
    assert {n: sw.running_config() for n, sw in farm.switches.items()} == before

    # A push that saved leaves nothing to save: exit 0 and not a word under -q.
    rc, out, err = run(capsys, "push", outdir, *known, "--yes", "-q")
    assert rc == 0 and out == "", err
    rc, out, err, qout, qerr = both(capsys, "save", outdir, *known)
    assert rc == 0 and "nothing to save" in out and qout == "" and qerr == ""


def test_lab_up_keeps_the_environment_and_drops_its_notes(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VLANROUTE_", "XDG_", "PYTEST_"))}
    # A given password is not printed: the `export` lines are the same on every start.
    env.update(HOME=str(tmp_path), VLANROUTE_LOOPBACK_ONLY="1", PYTHONPATH=str(REPO),
               VLANROUTE_SSH_PASSWORD="lab-test-password")
    outdir, state = tmp_path / "out", tmp_path / "state"

    def vr(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "vlanroute.cli", *args], env=env, capture_output=True,
                              text=True, timeout=240, cwd=tmp_path)

    assert vr("render", str(INV / "seed-ring.yaml"), "-o", str(outdir), "-q").returncode == 0
    runs = {}
    for quiet in ((), ("-q",)):
        up = vr("lab", "up", str(outdir), "--state-dir", str(state), *quiet)
        try:
            assert up.returncode == 0, up.stderr
        finally:
            down = vr("lab", "down", "--state-dir", str(state), *quiet)
        runs[quiet] = (up, down)
    (up, down), (qup, qdown) = runs[()], runs[("-q",)]
    assert "lab: 8 emulated switches" in up.stderr and "lab: stopped 8" in down.stderr
    # stdout of lab up is the product, for eval: the same lines with -q; nothing else.
    assert qup.stdout == up.stdout and all(line.startswith("export ") for line in up.stdout.splitlines())
    assert "VLANROUTE_TARGETS=" in qup.stdout and qup.stderr == ""
    assert qdown.returncode == down.returncode == 0 and qdown.stdout == qdown.stderr == ""
    # No lab running: the note is dropped, the exit code is the same.
    none, qnone = vr("lab", "down", "--state-dir", str(state)), vr("lab", "down", "--state-dir", str(state), "-q")
    assert none.returncode == qnone.returncode == 0 and "no lab was running" in none.stderr
    assert qnone.stdout == qnone.stderr == ""

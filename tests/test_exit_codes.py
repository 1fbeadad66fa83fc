"""Exit codes as docs/exit-codes.md documents them (vlanroute.exitcodes): push's mapping of
per-switch results, push without a person, --strict on plan and render."""

from __future__ import annotations

import json
from pathlib import Path
import re

import pytest

from push_support import build_cluster, run, set_ssh_env
from vlanroute.cli import main
from vlanroute.commands.push import exit_code
from vlanroute.device.push import SwitchResult
from vlanroute.exitcodes import ExitCode

REPO = Path(__file__).resolve().parent.parent
INV = REPO / "inventories"


def results(*states: str) -> list[SwitchResult]:
    return [SwitchResult(f"sw{i}", s) for i, s in enumerate(states, start=1)]


@pytest.mark.parametrize("states, code", [
    (("applied", "unchanged", "dry-run"), ExitCode.OK),
    (("unchanged", "not-started"), ExitCode.FAILED_CHECK),          # nothing changed
    (("rolled-back", "skipped"), ExitCode.FAILED_CHECK),
    (("applied", "rolled-back"), ExitCode.PARTIAL),                  # one changed, one not
    (("applied", "not-started", "skipped"), ExitCode.PARTIAL),
    (("SAVE-UNCERTAIN",), ExitCode.PARTIAL),                         # uncertain = partial, not 4
    (("applied", "SAVE-UNCERTAIN", "ROLLBACK-FAILED"), ExitCode.ROLLBACK_FAILED),
])
def test_push_results_map_to_the_documented_codes(states: tuple[str, ...], code: ExitCode) -> None:
    assert exit_code(results(*states)) == code


def test_the_exit_code_page_documents_every_code() -> None:
    text = (REPO / "docs" / "exit-codes.md").read_text()
    rows = dict(re.findall(r"^\| (\d+) \| `(\w+)` \|", text, re.M))
    assert rows == {str(int(c)): c.name for c in ExitCode}


def test_push_without_yes_off_a_terminal_exits_2_before_connecting(
        farm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts))
    assert rc == ExitCode.USAGE and "--yes" in err and "not at a terminal" in err and "Traceback" not in err
    assert all(sw.logins == 0 for sw in cluster.farm.switches.values())
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts), "--json")
    data = json.loads(out)
    assert rc == 2 and data["schema"] == "vlanroute-error/1" and "--yes" in data["error"]
    # --dry-run needs no answer.
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts),
                       "--dry-run", "--quiet")
    assert rc == ExitCode.OK


def test_strict_turns_warnings_into_failures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ring = str(INV / "seed-ring.yaml")          # DOR on a ring: a channel dependency cycle
    assert main(["plan", ring, "-q"]) == ExitCode.OK
    assert "802.3x" in capsys.readouterr().err
    assert main(["plan", ring, "-q", "--strict"]) == ExitCode.FAILED_CHECK
    assert "--strict" in capsys.readouterr().err
    turns = ["--set", "routing.algorithm=turns"]  # deadlock-free: no warning left
    assert main(["plan", ring, "-q", "--strict", *turns]) == ExitCode.OK
    out = tmp_path / "out"
    # render also warns about unconfirmed 62xx syntax: --strict refuses and writes nothing.
    assert main(["render", ring, "-o", str(out), "-q", "--strict", *turns]) == ExitCode.FAILED_CHECK
    err = capsys.readouterr().err
    assert "no public source confirms" in err and not out.exists()
    assert main(["render", ring, "-o", str(out), "-q", *turns]) == ExitCode.OK and out.is_dir()

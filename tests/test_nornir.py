"""The Nornir task (vlanroute.nornir_task) and examples/nornir_push.py against fake switches
on loopback; skipped when nornir is not installed (the `nornir` extra)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from push_support import PASSWORD, USER, build_cluster, set_ssh_env
from vlanroute.lab import Faults

nornir = pytest.importorskip("nornir")
REPO = Path(__file__).resolve().parent.parent


def example():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("nornir_push", REPO / "examples" / "nornir_push.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_nornir_task_previews_then_pushes_through_the_safety_steps(farm, tmp_path: Path, monkeypatch,  # type: ignore[no-untyped-def]
                                                                  capsys) -> None:
    set_ssh_env(monkeypatch)
    # leaf2 refuses one command of the last phase: it must be rolled back.
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml", {"leaf2": Faults(reject=r"^spanning-tree disable$")})
    targets = {n: {"host": sw.host, "port": sw.port} for n, sw in farm.switches.items()}
    (tmp_path / "targets.json").write_text(json.dumps({"format": "vlanroute-targets/1", "switches": targets}))
    mod = example()
    from vlanroute.nornir_task import vlanroute_push

    nr = mod.nornir_for(targets, USER, PASSWORD)
    preview = nr.run(task=vlanroute_push, outdir=cluster.outdir, known_hosts=cluster.known_hosts)
    assert not preview.failed
    assert {m[0].result["result"] for m in preview.values()} == {"dry-run"}
    assert all(m[0].diff and not m[0].changed for m in preview.values())
    assert all(sw.config_commands == 0 for sw in farm.switches.values())

    # The switch that rejects a command is rolled back and its task fails; the others apply.
    pushed = nr.run(task=vlanroute_push, outdir=cluster.outdir, dry_run=False, known_hosts=cluster.known_hosts)
    assert set(pushed.failed_hosts) == {"leaf2"}
    assert pushed["leaf2"][0].result["result"] == "rolled-back"
    for name in set(targets) - {"leaf2"}:
        assert pushed[name][0].changed and farm.switches[name].saved

    # The example script, as a user runs it (a dry run): the others are now as rendered.
    rc = mod.main([str(cluster.outdir), str(cluster.known_hosts), str(tmp_path / "targets.json")])
    out = capsys.readouterr().out
    assert rc == 0 and "leaf2: dry-run" in out and out.count(": unchanged:") == len(targets) - 1


def test_the_example_prints_switches_in_natural_order(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    from types import SimpleNamespace
    mod = example()
    names = ["sw10", "sw2", "sw1"]

    class Results(dict):  # type: ignore[type-arg]
        failed = False

    ran = Results({n: [SimpleNamespace(result={"result": "dry-run", "message": "m"})] for n in names})
    monkeypatch.setattr(mod, "nornir_for", lambda *a: SimpleNamespace(run=lambda **k: ran))
    monkeypatch.setenv("VLANROUTE_SSH_USER", USER)
    monkeypatch.setenv("VLANROUTE_SSH_PASSWORD", PASSWORD)
    (tmp_path / "t.json").write_text(json.dumps({"switches": {}}))
    assert mod.main([str(tmp_path), str(tmp_path / "kh"), str(tmp_path / "t.json")]) == 0
    assert [line.split(":")[0] for line in capsys.readouterr().out.splitlines()] == ["sw1", "sw2", "sw10"]

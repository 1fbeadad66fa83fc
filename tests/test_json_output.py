"""Every command's --json output: one JSON object on stdout that validates against the
command's schema (vlanroute/schemas/<command>.json, docs/json.md), with the schema name
first; user errors under --json are a `vlanroute-error/1` object; --quiet prints nothing
on stdout; push --dry-run --show-commands lists the commands in send order."""

from __future__ import annotations

import json
import os
from pathlib import Path
import re
import subprocess
import sys

import jsonschema
import pytest

from push_support import build_cluster, run, set_ssh_env
from vlanroute import schemas
from vlanroute.cli import main

REPO = Path(__file__).resolve().parent.parent
INV = REPO / "inventories"


def validated(command: str, text: str) -> dict:
    """stdout holds exactly one JSON object of `command`'s schema (`plan`: the plan document)."""
    data = json.loads(text)                       # fails on anything but one JSON value
    schema = schemas.load(command)
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(data, schema, cls=jsonschema.Draft202012Validator)
    first = next(iter(data))
    if command == "plan":
        assert first == "format"
    else:
        assert first == "schema" and data["schema"] == f"vlanroute-{command}/1"
    return data


def test_every_schema_file_is_a_valid_json_schema_and_documented() -> None:
    doc = (REPO / "docs" / "json.md").read_text()
    for command in schemas.COMMANDS:
        jsonschema.Draft202012Validator.check_schema(schemas.load(command))
        assert f"vlanroute-{command}/1" in doc or command == "plan", command
        assert f"vlanroute/schemas/{command}.json" in doc, command


# Commands without --json or --quiet, each named in docs/json.md with the reason.
NO_JSON = {"learn": "`learn`", "lab env": "`lab env`"}


def leaf_commands() -> dict[str, object]:
    """Every command and subcommand the CLI offers, as `vlanroute --help` lists them."""
    import click
    from vlanroute.cli import group
    ctx = click.Context(group)
    found: dict[str, object] = {}

    def walk(cmd: click.Command, path: str) -> None:
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                assert sub is not None, name
                walk(sub, f"{path} {name}".strip())
        else:
            found[path] = cmd
    walk(group, "")
    return found


def test_every_command_has_json_quiet_and_a_documented_schema() -> None:
    doc = (REPO / "docs" / "json.md").read_text()
    quiet_paragraph = doc.split("`--quiet` (`-q`", 1)[1].split("\n\n", 1)[0]
    commands = leaf_commands()
    assert {"plan", "render", "verify", "push", "audit", "cabling check", "import ansible",
            "lab up", "lab down", "save", "rollback", "discover"} <= set(commands)
    for path, cmd in commands.items():
        options = {o for p in cmd.params for o in getattr(p, "opts", [])}   # type: ignore[attr-defined]
        if path in NO_JSON:
            assert "--json" not in options and "--quiet" not in options and NO_JSON[path] in doc, path
            assert NO_JSON[path] in quiet_paragraph, f"{path}: docs/json.md must say why it has no --quiet"
            continue
        assert "--json" in options, f"{path} has no --json"
        assert {"-q", "--quiet"} <= options, f"{path} has no -q/--quiet"
        schema = path.split()[0] if path.split()[0] in ("import", "lab") else path.replace(" ", "-")
        assert schema in schemas.COMMANDS, f"{path}: no schema file"


def test_a_schema_rejects_what_it_should() -> None:
    # The schemas are not vacuous: a missing key or a wrong type fails.
    schema = schemas.load("render")
    good = {"schema": "vlanroute-render/1", "outdir": "o", "written": True, "files": 1, "bytes": 2,
            "verified": True, "warnings": []}
    jsonschema.validate(good, schema)
    for bad in ({**good, "schema": "vlanroute-render/2"}, {**good, "files": "1"},
                {k: v for k, v in good.items() if k != "verified"}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


def test_push_schema_and_doc_name_every_result_push_returns(tmp_path: Path) -> None:
    # Every result a switch can end in (vlanroute.device.push) validates, and json.md names
    # it: `push --no-save --json` once printed `applied-unsaved`, which the schema refused.
    from vlanroute.api import PushRun
    from vlanroute.device import push as P
    every = (P.APPLIED, P.APPLIED_UNSAVED, P.UNCHANGED, P.DRY_RUN, P.NOT_STARTED, P.SKIPPED,
             P.ROLLED_BACK, P.ROLLBACK_FAILED, P.SAVE_UNCERTAIN, P.PARTLY_APPLIED)
    assert set(every) >= set(P.SUCCESS) | set(P.CHANGED) | set(P.NEEDS_A_PERSON)
    schema = schemas.load("push")
    section = (REPO / "docs" / "json.md").read_text().split("## push:", 1)[1].split("\n## ", 1)[0]
    for result in every:
        run = PushRun(tmp_path, False, [P.SwitchResult("sw1", result)])
        data = validated("push", json.dumps({"schema": "vlanroute-push/1", **run.to_json(),
                                             "journal": str(tmp_path / "j.jsonl")}))
        assert data["switches"][0]["result"] == result
        assert f"`{result}`" in section, result
    # The switch record is a $def of the schema generated from PushDocument (schemas/outputs.py).
    record = schema["$defs"][schema["properties"]["switches"]["items"]["$ref"].rsplit("/", 1)[1]]
    assert set(record["properties"]["result"]["enum"]) == set(every)


def test_plan_algorithms_analyze_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(INV / "seed-ring.yaml"), "--json"]) == 0
    plan = validated("plan", capsys.readouterr().out)
    assert plan["format"] == "vlanroute-plan/2"
    assert main(["algorithms", "--json"]) == 0
    engines = validated("algorithms", capsys.readouterr().out)["engines"]
    assert {"shortest", "dor", "updown", "turns", "budget"} <= {e["name"] for e in engines}
    assert main(["analyze", "--json", str(INV / "seed-ring.yaml"), str(INV / "nope.yaml")]) == 2
    rows = validated("analyze", capsys.readouterr().out)["inventories"]
    assert [r["ok"] for r in rows] == [True, False]
    assert rows[0]["metrics"]["switches"] == 8 and "nope.yaml" in rows[1]["error"]


def test_render_verify_draw_report_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["render", str(INV / "seed-ring.yaml"), "-o", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    render = validated("render", captured.out)
    assert render["written"] and render["verified"] and render["files"] > 8
    assert any("802.3x" in w for w in render["warnings"]) and "warning:" in captured.err
    assert main(["verify", str(out), "--json", "--tables"]) == 0
    verify = validated("verify", capsys.readouterr().out)
    assert verify["ok"] and verify["violations"] == [] and len(verify["tables"]) == 8
    assert main(["draw", str(INV / "seed-ring.yaml"), "-o", str(tmp_path / "pics"), "--json",
                 "--max-vlans", "1", "--format", "svg"]) == 0
    draw = validated("draw", capsys.readouterr().out)
    assert all((tmp_path / "pics" / f).is_file() for f in draw["files"])
    assert main(["report", str(INV / "seed-ring.yaml"), "-o", str(tmp_path / "r.html"), "--json",
                 "--max-vlans", "1"]) == 0
    report = validated("report", capsys.readouterr().out)
    assert report["bytes"] == (tmp_path / "r.html").stat().st_size


def test_verify_json_reports_violations_with_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["render", str(INV / "seed-ring.yaml"), "-o", str(out), "-q"]) == 0
    assert capsys.readouterr().out == ""                                  # --quiet: nothing on stdout
    host = json.loads((out / "plan.json").read_text())["hosts"]["node001"]
    cfg = out / "switches" / f"{host['switch']}.cfg"
    cfg.write_text(cfg.read_text() + f"interface ethernet {host['port']}\nshutdown\nexit\n")
    rc = main(["verify", str(out), "--json"])
    data = validated("verify", capsys.readouterr().out)
    assert rc == 1 and not data["ok"] and data["violations"]


def test_user_error_under_json_is_an_error_object(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["render", str(tmp_path / "missing.yaml"), "-o", str(tmp_path / "o"), "--json"])
    captured = capsys.readouterr()
    data = validated("error", captured.out)
    assert rc == 2 and data["exit_code"] == 2 and "missing.yaml" in data["error"]
    assert "error:" in captured.err


def test_user_error_is_an_error_object_on_commands_with_their_own_help(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # These four named their own doc in a --json option of their own, which did not tell
    # the runner that --json was given: their user errors printed no object.
    for argv in (["cabling", "check", str(tmp_path / "none")], ["save", str(tmp_path / "none")],
                 ["rollback", str(tmp_path / "none")], ["discover"]):
        rc = main([*argv, "--json"])
        data = validated("error", capsys.readouterr().out)
        assert rc == 2 and data["exit_code"] == 2, argv


def test_usage_error_found_while_parsing_is_an_error_object_too(capsys: pytest.CaptureFixture[str]) -> None:
    # Click stops at an unknown option or a bad value before --json is seen: stdout must
    # still hold one error object.
    for argv in (["plan", str(INV / "seed-ring.yaml"), "--json", "--bogus"],
                 ["push", str(INV), "--workers", "0", "--json"],
                 ["render", str(INV / "seed-ring.yaml"), "-o", "x", "--learning-method", "carrier-pigeon", "--json"]):
        rc = main(argv)
        captured = capsys.readouterr()
        data = validated("error", captured.out)
        assert rc == 2 and data["exit_code"] == 2 and data["error"], argv
    assert main(["plan", str(INV / "seed-ring.yaml"), "--bogus"]) == 2
    assert capsys.readouterr().out == ""                  # without --json: nothing on stdout


def test_emulate_json_from_its_report(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    from vlanroute.emulate.run import Check, Report
    out = tmp_path / "lb"
    inv = tmp_path / "lb.yaml"
    inv.write_text((INV / "seed-ring.yaml").read_text())
    assert main(["render", str(inv), "-o", str(out), "--set", "platform=linux-bridge", "-q"]) == 0
    capsys.readouterr()
    fake = Report(str(out), "lb", "this host's kernel", "8 switches", [Check("no storm", True, "0 frames")],
                  {"build": 1.0}, teardown="clean", teardown_clean=True)
    monkeypatch.setattr("vlanroute.commands.emulate.run_here", lambda *a, **k: fake)
    monkeypatch.setattr("os.geteuid", lambda: 0)
    assert main(["emulate", str(out), "--kernel", "host", "--json"]) == 0
    data = validated("emulate", capsys.readouterr().out)
    assert data["ok"] and data["checks"][0]["name"] == "no storm"


def test_push_and_audit_json_and_show_commands(farm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    base = ["push", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts)]
    rc, out, err = run(capsys, *base, "--dry-run", "--json", "--show-commands", "--switch", "leaf1")
    data = validated("push", out)
    assert rc == 0 and data["dry_run"] and data["counts"] == {"dry-run": 1}
    [leaf1] = data["switches"]
    assert leaf1["commands"] and leaf1["commands_sent"] == 0 and cluster.switch("leaf1").config_commands == 0

    # Human form: the same lines in the same order under the switch's heading.
    rc, out, err = run(capsys, *base, "--dry-run", "--show-commands", "--switch", "leaf1")
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"leaf1: \d+ commands in send order", line))
    assert lines[start + 1:start + 1 + len(leaf1["commands"])] == leaf1["commands"]

    # The real push sends exactly those lines, in that order.
    rc, out, err = run(capsys, *base, "--yes", "--json", "--switch", "leaf1")
    data = validated("push", out)
    assert rc == 0 and data["switches"][0]["result"] == "applied"
    sent = cluster.switch("leaf1").received
    n = len(leaf1["commands"])
    assert any(sent[i:i + n] == leaf1["commands"] for i in range(len(sent) - n + 1))   # one run, in order

    rc, out, err = run(capsys, "audit", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts),
                       "--json", "--switch", "leaf1")
    data = validated("audit", out)
    assert data["checked"] >= data["present"] and isinstance(data["findings"], list)


def test_push_quiet_prints_nothing_on_stdout(farm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts),
                       "--dry-run", "--quiet")
    assert rc == 0 and out == ""


def test_lab_up_and_down_json(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VLANROUTE_", "XDG_", "PYTEST_"))}
    env.update(HOME=str(tmp_path), VLANROUTE_LOOPBACK_ONLY="1", PYTHONPATH=str(REPO))
    cli = [sys.executable, "-m", "vlanroute.cli"]
    outdir, state = tmp_path / "out", tmp_path / "state"

    def vr(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*cli, *args], env=env, capture_output=True, text=True, timeout=240, cwd=tmp_path)

    assert vr("render", str(INV / "seed-ring.yaml"), "-o", str(outdir), "-q").returncode == 0
    up = vr("lab", "up", str(outdir), "--state-dir", str(state), "--json")
    try:
        assert up.returncode == 0, up.stderr
        data = validated("lab", up.stdout)
        assert data["action"] == "up" and len(data["switches"]) == 8
        assert set(data["environment"]) >= {"VLANROUTE_SSH_USER", "VLANROUTE_TARGETS"}
    finally:
        down = vr("lab", "down", "--state-dir", str(state), "--json")
    assert down.returncode == 0
    assert validated("lab", down.stdout)["stopped"] == 8

"""The README's commands, run exactly as written, and the output it shows, checked.

In a copy of the repository, with nothing of the development environment visible:
- the first ```sh block is run verbatim with bash: it makes the virtual environment `.venv`
  in the checkout (without the system's site-packages), installs vlanroute into it (`pip
  install .`, the core alone) and renders the seed cluster there;
- the second (`pip install ".[test]" && python -m pytest -q`) is CI's own command: .ci/run
  runs it verbatim in a fresh clone (the first test below checks that it is a line of
  .ci/run), and this suite is its pytest. Run again here it only re-installed what CI had
  just installed (the test extras: about 110 s of CPU on the 2-core machine, half of this
  test), so the console steps below use the environment it made, the one this test runs in,
  with the test extras (the lab's asyncssh, the drawing stack);
- every `$ ` line of the ```console blocks is run verbatim, and the lines shown after it
  must appear in its output in that order (`...` alone skips lines; `...` inside a line
  matches anything; blank lines and trailing spaces do not count). A command whose shown
  output has an `error:` line must fail, every other must succeed.
The console commands run as in one shell session: what one exports (`eval "$(vlanroute
lab up out)"`) is set for the next, so `vlanroute push` and `audit` reach the emulated
switches the README starts, exactly as a reader's terminal would. No credentials are set
beforehand. The push loopback guard stays on throughout, and the lab is stopped at the end
whatever happened.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
SETUP_INTRO = ("# vlanroute\n\nSet up on a fresh machine and render the seed cluster's switch configs "
               "(8 PowerConnect 6248, 225 hosts, 4x2 torus):\n\n```sh\n")
# Left behind by the README's own commands or by development; never copied.
_SKIP_ANYWHERE = shutil.ignore_patterns(".git", "build", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis")
# What the README's commands write into the checkout; only at its top (vlanroute/pictures is code).
_SKIP_AT_TOP = {"out", "pictures", "big", "report.html", "edited", ".venv", "venv"}


def SKIP(folder: str, names: list[str]) -> set[str]:
    skipped = set(_SKIP_ANYWHERE(folder, names))
    if Path(folder) == ROOT:
        skipped |= _SKIP_AT_TOP & set(names)
    return skipped


@dataclass
class Step:
    command: str
    expected: list[str]


def code_blocks(text: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^```(\w*)\n(.*?)^```$", text, re.M | re.S)]


def sh_commands(text: str) -> list[str]:
    cmds = []
    for lang, body in code_blocks(text):
        if lang == "sh":
            cmds += [line for line in body.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return cmds


def console_steps(text: str) -> list[Step]:
    steps: list[Step] = []
    for lang, body in code_blocks(text):
        if lang != "console":
            continue
        for line in body.splitlines():
            if line.startswith("$ "):
                steps.append(Step(line[2:], []))
            elif steps and line.strip():
                steps[-1].expected.append(line.rstrip())
    return steps


def _pattern(line: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in line.split("...")) + r"\Z")


def missing_lines(expected: list[str], actual: str) -> list[str]:
    """The expected lines (in order, `...` skipping) that the actual output lacks."""
    lines = [l.rstrip() for l in actual.splitlines() if l.strip()]
    i = 0
    missing = []
    for want in expected:
        if want.strip() == "...":
            continue
        pat = _pattern(want)
        j = i
        while j < len(lines) and not pat.match(lines[j]):
            j += 1
        if j == len(lines):
            missing.append(want)
        else:
            i = j + 1
    return missing


def test_readme_starts_with_the_two_setup_commands_and_ci_runs_the_second_verbatim() -> None:
    text = README.read_text()
    assert text.startswith(SETUP_INTRO)
    cmds = sh_commands(text)
    assert cmds[:2] == ['python3 -m venv .venv && . .venv/bin/activate && pip install . && vlanroute render inventories/seed-torus.yaml -o out',
                        'python3 -m venv .venv && . .venv/bin/activate && pip install ".[test]" && python -m pytest -q']
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert cmds[1] in ci, "the README's second set-up command must be a line of .ci/run"


def test_output_matching_skips_and_wildcards() -> None:
    out = "a\nb 12 c\n\nd\n"
    assert missing_lines(["a", "...", "d"], out) == []
    assert missing_lines(["b ... c", "d"], out) == []
    assert missing_lines(["d", "a"], out) == ["a"]                 # order matters
    assert missing_lines(["b 1 c"], out) == ["b 1 c"]             # no wildcard, no partial match


def test_readme_names_no_file_that_does_not_exist() -> None:
    text = README.read_text()
    for target in re.findall(r'(?:\]\(|src=")((?:docs|inventories)/[^)#"]+)', text):
        assert (ROOT / target).is_file(), target
    for inv in re.findall(r"inventories/[\w.-]+\.yaml", text):
        if "seed-tours" not in inv:                                # the troubleshooting typo
            assert (ROOT / inv).is_file(), inv


def _copy_repo(dst: Path) -> None:
    shutil.copytree(ROOT, dst, ignore=SKIP, symlinks=True)


def _run(cmd: str, cwd: Path, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def _in_session(cmd: str, shell_state: Path) -> str:
    """`cmd` as the next command of one shell session: the variables earlier commands
    exported are set, and those it exports are kept for the next (export -p)."""
    return (f'[ -f "{shell_state}" ] && . "{shell_state}"\n{cmd}\n'
            f'__rc=$?; export -p > "{shell_state}"; exit $__rc')


def test_session_keeps_exports_between_commands(tmp_path: Path) -> None:
    state = tmp_path / "shell"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    assert _run(_in_session('eval "$(echo export A=1)"', state), tmp_path, env).returncode == 0
    r = _run(_in_session('echo "A=$A"; false', state), tmp_path, env)
    assert r.stdout.strip() == "A=1" and r.returncode == 1


@pytest.mark.pip_install
@pytest.mark.timeout(2400)
def test_readme_commands_run_as_written(tmp_path: Path) -> None:
    text = README.read_text()
    repo = tmp_path / "repo"
    _copy_repo(repo)
    venv = repo / ".venv"                 # made by the README's own commands
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV") and not k.startswith(("VLANROUTE_", "XDG_"))}
    env.update(HOME=str(home), COLUMNS="100", VLANROUTE_LOOPBACK_ONLY="1")

    first, second = sh_commands(text)
    # A fresh venv installs the core's dependencies (networkx, pydantic, netmiko, scipy...).
    r = _run(first, repo, env, timeout=1200)
    assert r.returncode == 0, f"{first}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    cfg = (venv / "pyvenv.cfg").read_text()
    assert "include-system-site-packages = false" in cfg, cfg
    # The README's install is the one in use (outside the source tree, which python -c would see first).
    readers = {**env, "PATH": f"{venv / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}", "VIRTUAL_ENV": str(venv)}
    where = _run("command -v vlanroute && python -c 'import vlanroute; print(vlanroute.__file__)'", tmp_path, readers)
    assert all(line.startswith(str(venv)) for line in where.stdout.split()), where.stdout
    assert (repo / "out" / "switches" / "sw1.cfg").is_file()
    # The second command's environment: CI's, made by that very line of .ci/run.
    assert second in (ROOT / ".ci" / "run").read_text().splitlines()
    session = Path(sys.executable).parent
    assert (session / "vlanroute").is_file(), f"no vlanroute script beside {sys.executable}"
    env.update(PATH=f"{session}:{env.get('PATH', '/usr/bin:/bin')}", VIRTUAL_ENV=sys.prefix)

    steps = console_steps(text)
    assert len(steps) >= 10
    assert any(s.command == 'eval "$(vlanroute lab up out)"' for s in steps)
    assert "vlanroute lab down" in [s.command for s in steps]
    shell_state = tmp_path / "shell-session"
    failures = []
    try:
        for step in steps:
            r = _run(_in_session(step.command, shell_state), repo, env)
            output = r.stdout + r.stderr
            should_fail = any(line.startswith("error:") for line in step.expected)
            if (r.returncode != 0) != should_fail:
                failures.append(f"$ {step.command}\nexit code {r.returncode}\n{output[-2000:]}")
                continue
            lost = missing_lines(step.expected, output)
            if lost:
                failures.append(f"$ {step.command}\nnot in the output: {lost[:3]}\n--- output:\n{output[-3000:]}")
    finally:
        _run("vlanroute lab down", repo, env)       # whatever happened, no lab outlives the test
    assert not failures, "\n\n".join(failures)

"""Sizes that cannot be built are refused before anything big is built; a read-only or full
file system is a clear error naming the path, never a traceback (render, draw, report)."""

from __future__ import annotations

import errno
import os
from pathlib import Path
import shutil
import subprocess
import sys

from hypothesis import given, settings, strategies as st
import pytest

from vlanroute.cli import main
from vlanroute.errors import UserError
from vlanroute.model import generators
from vlanroute.names import pattern_size_problem
from vlanroute.plan.build import plan_from_file

ROOT = Path(__file__).resolve().parent.parent
TORUS = ROOT / "inventories" / "seed-torus.yaml"


@pytest.fixture
def nothing_built(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any generator call fails the test: the refusal must come first."""
    def boom(*args: object, **kwargs: object) -> None:
        raise AssertionError("a topology was generated")
    for name in ("mesh", "torus", "hyper_crossbar", "ring", "complete", "tree", "grid_coords"):
        monkeypatch.setattr(generators, name, boom)


@pytest.mark.parametrize("sets, message", [
    (["topology.dims=[4096, 4096]"], "dims [4096, 4096] gives 16,777,216 switches; vlanroute plans at most 16,384"),
    (["topology.dims=[2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]"],
     "gives 16,777,216 switches"),
    (["topology.kind=complete", "topology.dims=null", "topology.size=16000"],
     "a complete of size 16000 has 255,984,000 inter-switch cables (2 per pair); vlanroute plans "
     "at most 1,000,000"),
    (["hosts.name=n{n:0200000000d}"], "the width 200000000 in {n:0200000000d} is longer than a name can be"),
    (["topology.switch_name=s{index:>200000000}"], "the width 200000000"),
    (["hosts.name=n{n:.99999999}"], "the precision 99999999"),
    (["hosts.name=n{n:{n}}"], "the format of {n} contains a placeholder"),
])
def test_huge_sizes_are_refused_before_anything_is_built(nothing_built: None, sets: list[str],
                                                         message: str) -> None:
    with pytest.raises(UserError) as caught:
        plan_from_file(TORUS, sets)
    assert message in caught.value.render()


def test_too_many_hosts_are_refused_before_the_host_list_is_built() -> None:
    with pytest.raises(UserError, match=r"16,777,216 hosts; vlanroute plans at most 1,000,000"):
        plan_from_file(TORUS, ["hosts.count=null", "hosts.per_switch=4096", "topology.dims=[64, 64]"])


def test_cli_refusal_is_a_message(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rc = main(["render", str(TORUS), "-o", str(tmp_path / "out"), "--set", "topology.dims=[4096,4096]"])
    err = capsys.readouterr().err
    assert rc == 2 and "16,777,216 switches" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("pattern", ["node{n:03d}", "sw{index}", "{switch}-h{i:02}", "x{coord}", "n{n:>10}"])
def test_ordinary_patterns_pass(pattern: str) -> None:
    assert pattern_size_problem(pattern) is None


@settings(max_examples=200, deadline=None)
@given(kind=st.sampled_from(["mesh", "torus", "hyper-crossbar"]),
       dims=st.lists(st.integers(1, 6), min_size=1, max_size=3))
def test_neighbour_pair_count_matches_the_generators(kind: str, dims: list[int]) -> None:
    gen = {"mesh": generators.mesh, "torus": generators.torus, "hyper-crossbar": generators.hyper_crossbar}[kind]
    assert generators.neighbour_pairs(kind, dims, None) == len(gen(dims)[1])


@given(n=st.integers(1, 40), fanout=st.integers(1, 5))
def test_neighbour_pair_count_of_ring_complete_tree(n: int, fanout: int) -> None:
    assert generators.neighbour_pairs("ring", None, n) == len(generators.ring(n)[1])
    assert generators.neighbour_pairs("complete", None, n) == len(generators.complete(n)[1])
    assert generators.neighbour_pairs("tree", None, n, fanout) == len(generators.tree(n, fanout)[1])


# --- file systems -------------------------------------------------------------------------------

def _refuse(code: int):  # type: ignore[no-untyped-def]
    def fail(*args: object, **kwargs: object) -> None:
        raise OSError(code, os.strerror(code), str(kwargs.get("dir") or (args[0] if args else "")))
    return fail


@pytest.mark.parametrize("code, words, fix", [
    (errno.EROFS, "the file system is read-only", "fix: choose a directory on a writable file system"),
    (errno.ENOSPC, "no space left on the device", "fix: free some space there"),
])
@pytest.mark.parametrize("command", ["render", "draw", "report"])
def test_disk_errors_are_messages(command: str, code: int, words: str, fix: str, tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import vlanroute.pictures.draw as draw
    import vlanroute.pictures.report as report
    import vlanroute.render.write as write
    if command == "report":
        monkeypatch.setattr(report.tempfile, "mkstemp", _refuse(code))
        target = tmp_path / "report.html"
        args = ["report", str(TORUS), "-o", str(target)]
    else:
        module = write if command == "render" else draw
        monkeypatch.setattr(module.tempfile, "mkdtemp", _refuse(code))
        target = tmp_path / "out"
        args = [command, str(TORUS), "-o", str(target)]
    rc = main(args)
    err = capsys.readouterr().err
    assert rc == 2, err
    assert f"cannot write: {words}" in err and str(tmp_path) in err and "Traceback" not in err
    assert fix in err                   # the fix fits the problem: no "free some space" on a read-only one
    assert not target.exists()


def _private_mounts_available() -> bool:
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("mount"):
        return False
    return subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode == 0


@pytest.mark.root
@pytest.mark.skipif(not _private_mounts_available(), reason="needs root and unshare -m")
@pytest.mark.parametrize("options, words", [("ro", "the file system is read-only"),
                                            ("size=64k", "no space left on the device")])
def test_real_read_only_and_full_file_systems(tmp_path: Path, options: str, words: str) -> None:
    """A tmpfs mounted in a private mount namespace (gone with the process)."""
    where = tmp_path / "mnt"
    where.mkdir()
    program = (f"mount -t tmpfs -o {options} tmpfs {where} && "
               f"{sys.executable} -m vlanroute.cli render {TORUS} -o {where}/out --no-verify")
    proc = subprocess.run(["unshare", "-m", "sh", "-c", program], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"cannot write: {words}" in proc.stderr and str(where) in proc.stderr
    assert "Traceback" not in proc.stderr

"""The compiled kernels' cache folder (routing/numba_jit.py) follows every kernel source: numba
checks a cached kernel against its own file only, so a change to a file of kernels it calls
(acyclic/kernel_parts.py, whatif/pairs_kernel.py) must move the whole cache."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("numba")

from vlanroute.routing import numba_jit  # noqa: E402


@pytest.mark.parametrize("name", ["kernel_parts.py", "pairs_kernel.py", "polish_kernel.py"])
def test_a_change_to_any_kernel_source_moves_the_cache(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    before = numba_jit.cache_dir.__wrapped__()
    read = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda p: read(p) + (b"#" if p.name == name else b""))
    assert numba_jit.cache_dir.__wrapped__() != before


def test_the_cache_stays_under_the_users_numba_cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(numba_jit._config, "CACHE_DIR", str(tmp_path))
    assert Path(numba_jit.cache_dir.__wrapped__()).parent == tmp_path
    monkeypatch.setattr(numba_jit._config, "CACHE_DIR", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert Path(numba_jit.cache_dir.__wrapped__()).parent == tmp_path / "xdg" / "vlanroute"


def test_other_versions_folders_unused_for_a_month_are_removed(tmp_path: Path) -> None:
    import os
    import time
    old, recent, keep = (tmp_path / f"numba-{c * 16}" for c in "abc")
    other = tmp_path / "numba-notours"            # not a folder of ours: never touched
    for folder in (old, recent, keep, other):
        folder.mkdir()
        (folder / "index.nbi").write_bytes(b"x")
    month = time.time() - (numba_jit.UNUSED_DAYS + 1) * 86400
    for folder in (old, keep, other):
        os.utime(folder, (month, month))
    numba_jit.prune(str(tmp_path), keep=str(keep))
    assert not old.exists()
    assert recent.exists() and other.exists() and keep.exists()
    assert keep.stat().st_mtime > month + 86400   # marked used, so no other version removes it


def test_an_unwritable_cache_base_is_left_alone(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    numba_jit.prune(str(blocker), keep=str(blocker / ("numba-" + "0" * 16)))   # raises nothing
    assert blocker.read_text() == "not a folder"

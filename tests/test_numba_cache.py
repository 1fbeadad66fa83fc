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

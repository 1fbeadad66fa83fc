"""bench/speed.py's reference workload: what it computes is the problem it says it is (the
closed forms of the torus's hop sum and all-to-all max load), so that its CPU seconds mean
the same fixed work on every machine they are compared across."""

from __future__ import annotations

import pytest

from bench_scripts import bench_module

speed = bench_module("speed.py", "speed_bench")


@pytest.mark.slow
def test_the_reference_solves_the_torus_problems_it_names_and_uses_no_vlanroute_code() -> None:
    ref = speed.reference()
    # A k-ring (k even) has k^2 / 4 hops from one node to all; a k x k torus 2 k (k^2 / 4)
    # from one node, k^5 / 2 over all ordered pairs: 40^5 / 2.
    assert ref["hops"] == 40**5 // 2
    # The all-to-all optimum of the odd k x k torus, one unit per ordered pair: k (k^2 - 1) / 8
    # per direction of a cable (a ring's (k^2 - 1) / 8, times the k rings that cross each cut).
    assert ref["load"] == pytest.approx(7 * (7**2 - 1) / 8)
    assert ref["python"] > 0 and ref["highs"] > 0
    assert "vlanroute" not in speed.REFERENCE


@pytest.mark.parametrize("flag", ["--help", "--doubles", "-q"])
def test_an_unknown_option_prints_the_usage_and_runs_nothing(monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str], flag: str) -> None:
    def ran(*_: object) -> None:
        raise AssertionError("a run started")
    monkeypatch.setattr(speed, "reference", ran)
    monkeypatch.setattr(speed, "run", ran)
    monkeypatch.setattr(speed.sys, "argv", ["speed.py", "--plan", flag])
    assert speed.main() == 2
    err = capsys.readouterr().err
    assert f"unknown option {flag}" in err and "Run: python bench/speed.py" in err

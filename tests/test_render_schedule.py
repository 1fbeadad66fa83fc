"""The MAC-refresh schedule: several runs per aging period, a splay, cron-expressible steps."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from vlanroute.errors import UserError
from vlanroute.plan.schedule import cron_step, schedule_for


@pytest.mark.parametrize("aging, interval, splay, cron", [
    (1_000_000, 86_400, 3_600, "7 3 * * *"),      # 62xx maximum: daily, one hour of splay
    (300, 60, 15, "* * * * *"),                   # factory default: every minute
    (7_200, 1_800, 450, "*/30 * * * *"),
    (40_000, 7_200, 1_800, "7 */2 * * *"),        # 10,000 s rounds down to 2 h
])
def test_default_schedule(aging: int, interval: int, splay: int, cron: str) -> None:
    s = schedule_for(aging)
    assert (s.interval_s, s.splay_s, s.cron) == (interval, splay, cron)


@pytest.mark.parametrize("seconds, step, cron", [
    (60, 60, "* * * * *"), (119, 60, "* * * * *"), (420, 360, "*/6 * * * *"),
    (3_599, 1_800, "*/30 * * * *"), (3_600, 3_600, "7 * * * *"), (18_000, 14_400, "7 */4 * * *"),
    (86_399, 43_200, "7 */12 * * *"), (200_000, 86_400, "7 3 * * *"),
])
def test_cron_step_rounds_down(seconds: int, step: int, cron: str) -> None:
    assert cron_step(seconds) == (step, cron)


def test_too_short_aging_is_a_user_error() -> None:
    with pytest.raises(UserError, match="too short"):
        schedule_for(200)


def test_explicit_interval_that_risks_aging_out_is_a_user_error() -> None:
    with pytest.raises(UserError, match="half the aging time"):
        schedule_for(3_600, interval_s=1_800, splay_s=600)


@given(st.integers(min_value=240, max_value=1_000_000))
def test_worst_gap_is_at_most_half_the_aging_time(aging: int) -> None:
    s = schedule_for(aging)
    assert 60 <= s.interval_s <= aging // 4 or s.interval_s == 60
    assert 2 * (s.interval_s + s.splay_s) <= aging
    assert 0 <= s.splay_s <= min(s.interval_s, 3_600)

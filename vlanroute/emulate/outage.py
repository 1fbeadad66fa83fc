"""The outage of host pairs when a neighbour pair's cables are cut, from probe timestamps
(issue 39's yardstick: vlanroute's failover against RSTP and 802.1D on the same cables).

Pure arithmetic, no kernel: the probes (emulate/probes.py) send one datagram per pair per
round, every `interval_s`, numbered by round; the receiver records each datagram's arrival
time as the kernel stamped it (SO_TIMESTAMPNS). From those and the instant of the cut:

- a pair is *interrupted* when a probe sent after `cut - guard` is lost (the guard covers
  probes in flight when the carrier went: the cut loses them too). A delay without a loss
  is not an interruption: the emulated hosts have permanent ARP entries and a port without
  carrier drops what it is given, so a cut path loses probes, it does not hold them;
- its *outage* is the issue's definition: from the last delivery before the loss to the
  first delivery after it (arrival times). Its resolution is the probe interval: a pair
  whose path came back at once still shows about one interval, two when the probe in
  flight was lost too;
- it is *never restored* when nothing arrives after its first lost probe until the end of
  the run (the timeout);
- later losses (a second gap after the first delivery) and duplicates (a datagram that
  arrived more than once: a frame looping or flooded twice) are counted per pair.

Percentiles are nearest-rank (the smallest value with at least q % of the pairs at or
below it), over the interrupted pairs, a never-restored pair counting as infinitely long:
so a median is "never" once half the pairs never came back.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

NS = 1_000_000_000
OVERLOAD_LOSS = 0.001
OVERLOAD_PACE = 1.5


@dataclass(frozen=True)
class PairOutage:
    pair: tuple[str, str]
    interrupted: bool
    outage_s: float | None = None      # last delivery before the loss to the first after; None: never restored
    restore_s: float | None = None     # the cut to the first delivery after it
    lost: int = 0                      # probes lost from the first loss on
    later_lost: int = 0                # of those, lost after the first delivery after the cut
    lost_before: int = 0               # probes lost before cut - guard (the network or the prober was overloaded)
    duplicates: int = 0
    delivering_at_end: bool = True     # the last probes of the run all arrived

    @property
    def restored(self) -> bool:
        return not self.interrupted or self.outage_s is not None


@dataclass(frozen=True)
class ProbeRecord:
    """What the probes saw, as plain numbers: the input of `pair_outages`."""
    pairs: list[tuple[str, str]]
    interval_s: float
    round_ns: list[int]                # when each round started (CLOCK_REALTIME ns)
    deliveries: list[list[tuple[int, int]]]   # per pair: (round, arrival ns), in arrival order, duplicates included
    cut_ns: int                        # the first cable end went down
    cut_end_ns: int = 0                # the last one went down
    unsent: int = 0                    # sendto refused (a full queue): counted as lost
    start_ns: int = 0                  # every pair delivered from here on: losses before are the warm-up's


def pair_outage(pair: tuple[str, str], round_ns: Sequence[int], deliveries: Iterable[tuple[int, int]],
                cut_ns: int, guard_ns: int, tail_rounds: int = 3, start_ns: int = 0) -> PairOutage:
    """One pair's outage (module docstring). `deliveries`: (round, arrival ns) per datagram;
    rounds sent before `start_ns` (the warm-up: the switches set up their flows) are not
    counted as lost."""
    first: dict[int, int] = {}
    duplicates = 0
    for r, t in deliveries:
        if r in first:
            duplicates += 1
            first[r] = min(first[r], t)
        else:
            first[r] = t
    rounds = len(round_ns)
    lost = [r for r in range(rounds) if r not in first and round_ns[r] >= start_ns]
    after = [r for r in lost if round_ns[r] >= cut_ns - guard_ns]
    before = len(lost) - len(after)
    end_ok = all(r in first for r in range(max(0, rounds - tail_rounds), rounds))
    if not after:
        return PairOutage(pair, False, lost_before=before, duplicates=duplicates, delivering_at_end=end_ok)
    start = after[0]
    while start - 1 >= 0 and start - 1 not in first and round_ns[start - 1] >= start_ns:   # the loss run of the cut
        start -= 1
    before -= after[0] - start
    last_before = max((r for r in first if r < start), default=None)
    # The earliest arrival of a later probe (not the lowest round: one held in a queue while
    # the path was down may arrive after a later one).
    first_after = min((r for r in first if r > start), key=first.__getitem__, default=None)
    counted = [r for r in lost if r >= start]
    if first_after is None:
        return PairOutage(pair, True, None, None, len(counted), 0, before, duplicates, end_ok)
    since = first[last_before] if last_before is not None else round_ns[0]
    outage = (first[first_after] - since) / NS
    restore = (first[first_after] - cut_ns) / NS
    later = sum(1 for r in counted if r > first_after)
    return PairOutage(pair, True, outage, restore, len(counted), later, before, duplicates, end_ok)


def pair_outages(record: ProbeRecord, guard_s: float = 0.2) -> list[PairOutage]:
    guard = int(guard_s * NS)
    return [pair_outage(p, record.round_ns, d, record.cut_ns, guard, start_ns=record.start_ns)
            for p, d in zip(record.pairs, record.deliveries)]


def nearest_rank(values: Sequence[float], q: float) -> float:
    """The q-th percentile, nearest-rank: sorted(values)[ceil(q/100 n) - 1]; nan when empty."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


@dataclass
class OutageSummary:
    """One method's run: the figures of the issue's table."""
    method: str
    pairs: int                          # pairs probed
    interrupted: int
    never_restored: int
    median_s: float | None              # None: never (see the module docstring)
    p90_s: float | None
    p99_s: float | None
    max_s: float | None
    mean_restore_s: float | None        # mean of cut -> first delivery, restored pairs
    lost: int                           # probes lost after the cut, all pairs
    later_lost: int
    lost_before: int
    duplicates: int
    not_delivering_at_end: int
    interval_s: float                   # the probe interval asked for
    achieved_interval_s: float          # the median time between rounds the sender managed
    achieved_interval_p99_s: float
    rounds: int
    timeout_s: float
    lost_before_share: float = 0.0      # of the probes sent before the cut, the share lost
    notes: list[str] = field(default_factory=list)
    stage: int = 0                      # which failure of the run (0: the first; the later ones follow its heal)
    failure: str = ""                   # what failed: "fail sw1-sw2", "stop sw3"

    @property
    def overloaded(self) -> bool:
        """The probes measured the emulator, not the fabric: probes lost before the cut
        (more than 0.1 %), or the sender's rounds came 1.5 times slower than asked."""
        return self.lost_before_share > OVERLOAD_LOSS or self.achieved_interval_s > OVERLOAD_PACE * self.interval_s


def _finite(x: float) -> float | None:
    return None if math.isinf(x) or math.isnan(x) else x


def summarize(method: str, record: ProbeRecord, outages: Sequence[PairOutage], timeout_s: float,
              guard_s: float = 0.2) -> OutageSummary:
    hit = [o for o in outages if o.interrupted]
    values = [o.outage_s if o.outage_s is not None else math.inf for o in hit]
    restores = [o.restore_s for o in hit if o.restore_s is not None]
    gaps = [(b - a) / NS for a, b in zip(record.round_ns, record.round_ns[1:])]
    before = sum(1 for t in record.round_ns if record.start_ns <= t < record.cut_ns - int(guard_s * NS)) * len(outages)
    return OutageSummary(
        method, len(outages), len(hit), sum(1 for o in hit if o.outage_s is None),
        _finite(nearest_rank(values, 50)), _finite(nearest_rank(values, 90)), _finite(nearest_rank(values, 99)),
        _finite(max(values, default=math.nan)),
        sum(restores) / len(restores) if restores else None,
        sum(o.lost for o in outages), sum(o.later_lost for o in outages), sum(o.lost_before for o in outages),
        sum(o.duplicates for o in outages), sum(1 for o in outages if not o.delivering_at_end),
        record.interval_s, nearest_rank(gaps, 50) if gaps else math.nan, nearest_rank(gaps, 99) if gaps else math.nan,
        len(record.round_ns), timeout_s, sum(o.lost_before for o in outages) / before if before else 0.0)


def fmt_s(value: float | None, never: str = "never") -> str:
    """Seconds for the table: ms below 10 s."""
    if value is None:
        return never
    return f"{value * 1000:.0f} ms" if value < 10 else f"{value:.1f} s"

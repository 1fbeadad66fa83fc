"""The watcher's policy: plan.json's `operation.watch` (the inventory's, model/operation.py),
each field overridable on the command line; the defaults when the plan has none."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from vlanroute.bundle.document import PlanDocument
from vlanroute.errors import UserError
from vlanroute.model.operation import WatchSpec


@dataclass(frozen=True)
class WatchPolicy:
    policy: str
    heal: frozenset[str]
    strategies: tuple[str, ...]
    interval_s: float
    debounce_polls: int
    debounce_s: float
    hold_down_s: float
    notify: str | None
    syslog_listen: str | None
    audit: bool
    retries: int
    retry_s: float

    @classmethod
    def of(cls, doc: PlanDocument, overrides: Mapping[str, Any] | None = None,
           option_names: Mapping[str, str] | None = None) -> WatchPolicy:
        """The plan's policy (or the defaults), then the command line's values (validated by
        the inventory's own rules: a wrong value names its option)."""
        base = doc.operation.watch.model_dump() if doc.operation is not None and doc.operation.watch is not None \
            else WatchSpec().model_dump()
        given = {k: v for k, v in (overrides or {}).items() if v is not None}
        from pydantic import ValidationError
        try:
            spec = WatchSpec.model_validate({**base, **given})
        except ValidationError as exc:
            err = exc.errors()[0]
            name = str(err["loc"][0]) if err["loc"] else "operation.watch"
            where = (dict(option_names or {}).get(name, f"--{name.replace('_', '-')}") if name in given
                     else f"plan.json operation.watch.{name}")
            raise UserError(f"{where}: {err['msg'].removeprefix('Value error, ')}", field=where) from None
        return cls(spec.policy, frozenset(spec.heal), tuple(spec.strategies), spec.interval_s, spec.debounce_polls,
                   spec.debounce_s, spec.hold_down_s, spec.notify, spec.syslog_listen, spec.audit, spec.retries,
                   spec.retry_s)

    def with_(self, **changes: Any) -> WatchPolicy:
        return replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["heal"] = sorted(self.heal)
        out["strategies"] = list(self.strategies)
        return out

    def fast_s(self) -> float:
        """The interval while a port has been seen down and does not count yet: the debounce's
        reads spread over `debounce_s`, never slower than the interval nor faster than 0.2 s."""
        if self.debounce_polls < 2:
            return self.interval_s
        return max(0.2, min(self.interval_s, self.debounce_s / (self.debounce_polls - 1)))

    def detection_bound_s(self) -> float:
        """The longest a dead port takes to count as down, reads aside: up to one interval
        before a read sees it (none with a syslog hint: a read at once), then the debounce
        (its reads `fast_s` apart, and `debounce_s`)."""
        return self.interval_s + max(self.debounce_s, (self.debounce_polls - 1) * self.fast_s())

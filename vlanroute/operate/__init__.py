"""Operation: the fabric after the push. `vlanroute watch` (docs/watch.md) follows the link
state of every inter-switch port of a published plan, debounces it, and heals a dead
neighbour pair or switch through the loop-free push machinery (the Python API's `push`),
or proposes the change; then goes back to the plan when the failure has gone.

    debounce.py     a port (or a switch's reachability) counts as changed only when it stays so
    fabricview.py   confirmed port states -> the failures of the plan (cables, pairs, switches)
    poller.py       every switch's link states over SSH sessions kept open, one round per interval
    syslog.py       link-down syslog messages: an early hint that triggers a round at once
    heal.py         the strategies that turn failures into a bundle to push (today: repair)
    journal.py      the watcher's own journal (written ahead), read again after a restart
    watcher.py      the decisions: act, propose, retry, recover; the locks
    notify.py       the site's hook: a command run with the event as JSON on stdin
    events.py       structured logs: one JSON object per line
    unit.py         the systemd unit that runs the watcher as a service
"""

"""Loop-free transitions: every change to the switches, from what they run now to a target,
as a sequence of per-switch steps proven loop-free after every step and, where a switch
applies lines one by one, after every line (docs/push.md, "Transitions").

The stage sits between render and push: it reads parsed configs (vlanroute.model.bridge),
the plan's cables and the families' parsers, and knows nothing of SSH. Push, the push of a
repair, rollback, the Python API, the Nornir task and the emulated data plane all plan
their changes here.

- `fabric.py`: the vendor-neutral view of what each cable end and host port forwards;
- `loops.py`: the loop check of one fabric state (spanning tree taken into account);
- `program.py`: one switch's change as the states its cable ends go through, line by line;
- `planner.py`: the order of steps (whole switches, or removals first and additions later);
- `cuts.py`: the host pairs a transition cuts, and for which steps;
- `report.py`: the step sequence and its proof, as text and JSON.
"""

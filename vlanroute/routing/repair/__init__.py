"""Repair a plan's VLAN trees around failed links and switches (`vlanroute repair`, the
watcher's heal, and every failure `vlanroute whatif` prices).

- model.py: what a repair reads and returns: a VLAN's tree, the degraded fabric, the result;
  trees rooted and their all-to-all loads;
- engine.py: the repair itself, the fewest links that join each broken tree again, then
  each added link exchanged for the best across its cut;
- loads.py: every VLAN's load on every arc, and one link exchange tried in the time of the
  paths it changes;
- guard.py: channel dependencies, the deadlock guard that keeps a deadlock-free plan so;
- push_order.py: the order of switches that pushes a repair with no loop in any VLAN at
  any step.
"""

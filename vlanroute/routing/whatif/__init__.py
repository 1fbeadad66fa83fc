"""What if: every single failure of a neighbour pair and of a switch, repaired in turn.

- failures.py: the table of every single failure (`vlanroute whatif`);
- pairs.py: the fast path of a dead neighbour pair;
- switches.py: the fast path of a dead switch.
"""

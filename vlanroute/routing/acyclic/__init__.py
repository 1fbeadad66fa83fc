"""The acyclic engine: deadlock-free routes on any fabric without virtual lanes.

- engine.py: the engine itself, trees grown in the channel dependency graph;
- negotiate.py: negotiated congestion on a fixed channel order;
- polish.py: single branches moved off the hottest links;
- refine.py: channel orders refined with the order LP's prices;
- restarts.py: restarts under shuffled switch names (symmetry breaking on tori);
- stored.py: plans an offline search found for tori (plans/), checked when loaded.
"""

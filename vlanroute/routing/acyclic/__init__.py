"""The acyclic engine: deadlock-free routes on any fabric without virtual lanes.

- engine.py: the engine itself, its search and effort;
- router.py: one attempt of the search, trees grown in the channel dependency graph;
- negotiate.py: negotiated congestion on a fixed channel order;
- polish.py: single branches moved off the hottest links;
- refine.py: channel orders refined with the order LP's prices;
- lp_guide.py: a channel order that admits the exact optimum's turns first;
- starts.py: order walks from up*/down* orders of many roots;
- columns.py: trees as columns, the hosts of each switch assigned to trees of one order;
- restarts.py: restarts under shuffled switch names (symmetry breaking on tori);
- stored.py: plans an offline search found for tori (plans/), checked when loaded;
- gapped.py: the stored tori's channel orders on the same tori with cables gone.
- negotiate_kernel.py, pricing_kernel.py, polish_kernel.py: negotiate's rounds, columns'
  pricing and polish's branch moves compiled with numba where they are large, the same trees.
"""

"""vlanroute: VLAN routing for Ethernet HPC clusters whose switches are wired with loops.

Pipeline: inventory -> topology -> routing -> VLAN plan -> verification -> rendering -> push.
"""

__version__ = "0.1.0"

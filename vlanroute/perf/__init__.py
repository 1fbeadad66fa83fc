"""What a plan's routes give the traffic: flow rates by max-min fairness (maxmin.py) over
a fabric's host links and cables (fabric.py), for traffic patterns (patterns.py), next to
plain Ethernet's spanning tree on the same cables (stp.py); evaluate.py ties them together."""

"""What the access/trunk CLIs (Arista EOS, Dell OS10) share: no general/hybrid mode, so a
port has at most one untagged VLAN (its native VLAN) and carries its trunk's allowed list tagged.

- mode.py: one config reader for both dialects;
- delta.py: the commands that take a switch from one parsed config to another;
- lines.py: what each command line of a pushed file does (loop-safe order);
- family.py: the Family part both share.
"""

"""Whether the compiled kernels may run: numba installed and importable, and not turned off.

numba is optional (the extra `fast`). Each kernel computes exactly what the interpreted code
beside it computes (the same choices, the same floats), so this decides only the speed:
- the what-if's dead pairs and dead switches (routing/whatif/pairs_kernel.py, switches_kernel.py);
- the balanced shortest-path trees of `shortest` on large fabrics (routing/balance_kernel.py);
- the column step's pricing (routing/acyclic/pricing_kernel.py), of `acyclic` on irregular fabrics;
- the branch moves of `polish` (routing/acyclic/polish_kernel.py), of `acyclic`, `budget` and
  routing below the switch;
- the negotiated re-routing's rounds (routing/acyclic/negotiate_kernel.py), of `acyclic` and of
  routing below the switch.

Each kernel runs from a measured amount of work, lower once numba is loaded in the process or
the process has used LONG_RUN s of CPU (`long_run`). Nothing here imports numba unless asked;
the kernel modules import it (routing/numba_jit.py), and only callers that found it working
import them.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import time


def compiled_allowed() -> bool:
    """numba installed and importable, and VLANROUTE_NO_JIT not set."""
    return not os.environ.get("VLANROUTE_NO_JIT") and numba_works()


@functools.cache
def numba_works() -> bool:
    """numba is installed and imports. A broken install (say numba built for another numpy)
    costs the compiled paths, with one warning on stderr, not the command."""
    if importlib.util.find_spec("numba") is None:
        return False
    try:
        import numba  # noqa: F401
    except Exception as e:             # numba raises ImportError, and others on a bad llvmlite
        logging.getLogger(__name__).warning(
            "numba is installed but does not import (%s: %s): whatif and large plans run interpreted, "
            "with the same results but slower. Reinstall it (pip install 'vlanroute[fast]'), or set "
            "VLANROUTE_NO_JIT=1 to silence this.", type(e).__name__, e)
        return False
    return True


# A process that has run this long (CPU s, its imports included) is planning something large:
# from then on the acyclic kernels (negotiation, pricing, polish) run from their warm
# thresholds, as if loaded already, since the rest of the plan likely pays for loading them.
# They compute what the interpreted code computes, so this changes no plan. Measured (CPU s
# of the default plan, the same plans): the dragonfly 6x4 5.30-5.44 to 4.93-4.95, the 6x6
# torus with 3 cables gone 17.8-18.3 to 17.5-17.6, the 8x8 with 6 gone 13.2-13.3 to 12.9;
# random 4-regular 64 (4.4-4.6) unchanged. At 3 s random 3-regular 48 (2.8 s of plan) passed
# the mark near its end and lost 0.1 s; random 3-regular 24 and the dragonfly 9x4 (1.6 and
# 2.5 s) never reach it.
LONG_RUN = 4.0


def long_run() -> bool:
    """The process has used LONG_RUN s of CPU: the kernels are worth loading now."""
    return time.process_time() >= LONG_RUN

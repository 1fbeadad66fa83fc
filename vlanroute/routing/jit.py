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

Nothing here imports numba unless asked; the kernel modules import it (routing/numba_jit.py),
and only callers that found it working import them.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os


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

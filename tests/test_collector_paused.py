"""The default's search runs with Python's cycle collector paused (routing/choose.py
collector_paused): it must come back as it was, after an error too. (What the search
computes cannot depend on it: nothing in vlanroute uses weak references or finalizers.)"""

from __future__ import annotations

import gc

import pytest

from vlanroute.routing.choose import collector_paused


def test_the_collector_is_back_as_it_was() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError):
        with collector_paused():
            raise RuntimeError("an engine failed")
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()          # left off by its owner: stays off
    finally:
        gc.enable()

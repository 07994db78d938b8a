"""The server process freezes its start-up heap, collects less often, and gives back what start-up freed (see
gc_tuning.py for why)."""

from __future__ import annotations

import ctypes
import gc
import os

import pytest
from threadline.serving.gc_tuning import THRESHOLDS, give_back_freed_memory, tune_for_serving


def resident_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def test_tuning_freezes_what_exists_and_raises_the_thresholds():
    before = gc.get_threshold()
    try:
        tune_for_serving()
        assert gc.get_freeze_count() > 10_000  # the modules, the app: everything start-up made
        assert gc.get_threshold() == THRESHOLDS
        assert gc.isenabled()  # cycles are still collected, only less often
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


@pytest.mark.skipif(not hasattr(ctypes.CDLL(None), "malloc_trim"), reason="glibc's malloc_trim")
def test_memory_freed_below_what_is_still_used_is_given_back():
    chunks = [b"%08d" % number * 512 for number in range(20_000)]  # 80 MB from malloc, each page written
    kept = b"%04d" % len(chunks) * 1024  # above them on the heap: glibc's free alone cannot shrink the heap past it
    del chunks
    freed = resident_mb()
    give_back_freed_memory()
    assert freed - resident_mb() > 40, "most of the 80 MB freed is no longer resident"
    assert kept

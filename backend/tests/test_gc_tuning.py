"""The server process freezes its start-up heap and collects less often (see gc_tuning.py for why)."""

from __future__ import annotations

import gc

from threadline.serving.gc_tuning import THRESHOLDS, tune_for_serving


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

"""Garbage collection for a server process: the heap built at start-up is frozen, collections come later, and
what start-up freed is given back.

CPython's cycle collector runs a young collection every 700 allocations, and now and then one that
walks every object in the process. A threadline server holds about 60 MB of objects that live as long
as it does (LangChain, LangGraph, the compiled graph), and under load it spent about a fifth of its
CPU walking them: `python3 tasks.py bench compare` went from 67 to about 100 answers/s at c=64 with
this, and 1000 open streams from some 150 first-token timeouts to none. Objects without cycles are
still freed at once by reference counting; only cyclic garbage waits longer.

Importing and building the app also allocates memory it frees again, which glibc's `malloc` keeps for later
use: about 4 MB of an idle server's RSS (132.5 -> 128.6 MB, twice). `malloc_trim` hands it back once start-up is
done; an answer that needs it again allocates it again.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc

THRESHOLDS = (10_000, 50, 100)  # CPython's default is (700, 10, 10)


def tune_for_serving() -> None:
    """Call once the server has started: what exists then is kept for the life of the process."""
    gc.collect()  # so that start-up's own garbage is not frozen with it
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
    give_back_freed_memory()


def give_back_freed_memory() -> None:
    """glibc's `malloc_trim`; nothing where the C library has none (macOS, musl)."""
    with contextlib.suppress(AttributeError, OSError, TypeError):
        ctypes.CDLL(None).malloc_trim(0)

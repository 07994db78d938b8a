"""Counts a PDF's pages in a process of its own (`python -m threadline.conversations.pdf_pages`).

A PDF can be made slow to open: a broken cross-reference table over 100,000 objects makes pypdf rebuild it
object by object (and warn for each), and chains of indirect references recurse deeply. Opened here, that
costs this short-lived process, never the server's event loop: the server kills it after
FILE_CHECK_SECONDS, and it stops itself at a CPU-time and memory bound. It prints the page count, or exits
with 1 when the file is not a PDF that can be read.
"""

from __future__ import annotations

import io
import logging
import sys
import warnings

MEMORY_BYTES = 1 << 30  # what opening one file may take (the file itself is at most 30 MB)


def _bounded(cpu_seconds: int) -> None:
    try:
        import resource
    except ImportError:  # not on Windows: the server's wall-clock bound still holds
        return
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))


def main() -> int:
    _bounded(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
    logging.disable(logging.CRITICAL)  # pypdf warns once per broken object: nobody reads those
    warnings.simplefilter("ignore")
    data = sys.stdin.buffer.read()
    from pypdf import PdfReader

    try:
        pages = len(PdfReader(io.BytesIO(data)).pages)
    except (Exception, RecursionError):  # noqa: BLE001 - whatever fails to open is not a PDF we accept
        return 1
    print(pages)
    return 0


if __name__ == "__main__":
    sys.exit(main())

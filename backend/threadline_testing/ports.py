"""Free TCP ports on the loopback interface."""

from __future__ import annotations

import random
import socket
from pathlib import Path

EPHEMERAL = Path("/proc/sys/net/ipv4/ip_local_port_range")


def _below_ephemeral() -> range:
    """Ports the kernel never hands out as an outgoing connection's local port: a port picked from its ephemeral range
    can be taken by a client socket (to PostgreSQL, Redis, another test's server) between our check and the listen."""
    try:
        low = int(EPHEMERAL.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    return range(max(1024, low - 12000), low)


def free_port() -> int:
    """A port nothing listens on right now, chosen at random below the ephemeral range so that parallel test workers
    and outgoing connections do not race for it."""
    ports = _below_ephemeral()
    for _ in range(200):
        port = random.choice(ports)
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]

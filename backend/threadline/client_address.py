"""Who is really calling: the peer address, or the forwarded one when a trusted proxy stands in between.

X-Forwarded-For is read right to left, skipping our own trusted proxies; the first address that is not
one of them is the client. A client cannot dodge a limit by sending its own header (it is only read
when the peer is a trusted proxy, and a forged entry sits left of the one the proxy appended), and the
proxy's own address never becomes everyone's address.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from litestar.types import Scope

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class ClientAddress:
    def __init__(self, trusted_proxies: Iterable[str]) -> None:
        self.trusted: tuple[Network, ...] = tuple(ipaddress.ip_network(item, strict=False) for item in trusted_proxies)

    def is_trusted(self, address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in self.trusted)

    def of(self, scope: Scope) -> str:
        peer = scope["client"][0] if scope.get("client") else "unknown"
        if not self.is_trusted(peer):
            return peer
        hops = [hop.strip() for name, value in scope["headers"] if name == b"x-forwarded-for"
                for hop in value.decode("latin-1").split(",")]
        for hop in reversed(hops):
            if not hop:
                continue
            if not self.is_trusted(hop):
                return _normalised(hop)
        return _normalised(hops[0]) if hops and hops[0] else peer


def _normalised(address: str) -> str:
    """One spelling per address; a value that is not an address is kept as sent, still a distinct key."""
    try:
        return str(ipaddress.ip_address(address))
    except ValueError:
        return address[:64]

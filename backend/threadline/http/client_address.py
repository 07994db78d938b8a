"""Who is really calling: the peer address, or the forwarded one when a trusted proxy stands in between.

X-Forwarded-For is read right to left, skipping our own trusted proxies; the first address that is not
one of them is the client. A client cannot dodge a limit by sending its own header (it is only read
when the peer is a trusted proxy, and a forged entry sits left of the one the proxy appended), and the
proxy's own address never becomes everyone's address.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from litestar.types import ASGIApp, Receive, Scope, Send

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def without_port(hop: str) -> str:
    """A forwarded address as some load balancers write it, with a port (`203.0.113.50:1234`,
    `[2001:db8::1]:1234`), as the address alone; a bare IPv6 address is left as it is."""
    hop = hop.strip()
    if hop.startswith("["):
        return hop[1:].split("]", 1)[0]
    if hop.count(":") == 1:
        return hop.split(":", 1)[0]
    return hop


def rate_key(address: str) -> str | None:
    """One key per client however its address is written: an IPv4-mapped IPv6 address is its IPv4 address,
    a zone id is dropped, and IPv6 addresses share their /64 (one subscriber's usual allocation, which
    otherwise hands out 2^64 fresh keys). None when it is not an address at all."""
    try:
        ip = ipaddress.ip_address(address.strip().split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if isinstance(ip, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class ClientAddress:
    def __init__(self, trusted_proxies: Iterable[str]) -> None:
        self.trusted: tuple[Network, ...] = tuple(ipaddress.ip_network(item, strict=False) for item in trusted_proxies)

    def is_trusted(self, address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address.split("%", 1)[0])
        except ValueError:
            return False
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        return any(ip in network for network in self.trusted)

    def of(self, scope: Scope) -> str:
        """The rate-limit key of the caller: the client behind our trusted proxies, else the peer itself. A
        forwarded value that is not an address is not a key: the peer's is used instead."""
        client = scope.get("client")
        peer = client[0] if client else "unknown"
        peer_key = rate_key(peer) or peer
        if not self.is_trusted(peer):
            return peer_key
        hops = [
            without_port(hop)
            for name, value in scope["headers"]
            if name == b"x-forwarded-for"
            for hop in value.decode("latin-1").split(",")
        ]
        for hop in reversed(hops):
            if not self.is_trusted(hop):
                return rate_key(hop) or peer_key
        return (rate_key(hops[0]) if hops else None) or peer_key


class ForwardedScheme:
    """Behind a TLS-terminating proxy the request reaches us as http: when the peer is one of our trusted
    proxies, its X-Forwarded-Proto (the value nearest the client) is the scheme, so the visitor cookie is
    `Secure` and URLs are https. From anyone else the header is ignored."""

    def __init__(self, app: ASGIApp, addresses: ClientAddress) -> None:
        self.app = app
        self.addresses = addresses

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        client = scope.get("client")
        if client and self.addresses.is_trusted(client[0]):
            for name, value in scope["headers"]:
                if name == b"x-forwarded-proto":
                    proto = value.decode("latin-1").split(",", 1)[0].strip().lower()
                    if proto in ("http", "https"):
                        scope["scheme"] = proto
                    break
        await self.app(scope, receive, send)

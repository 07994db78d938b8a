"""The HTTP edge, and the only package that knows HTTP.

The Litestar app and its lifespan (`app`, which starts `threadline.runtime`'s services), who is calling
(`identity`, `client_address`), what a caller may spend (`limits`, `rate_limit`, `connection_limits`), the
request and response bodies (`schemas`), how a refusal or a failure becomes a status and a JSON body
(`errors`), the security headers, and the routes: `routes` for threadline's own API and wires,
`routes.contracts` for the seed contracts.
"""

__all__ = [
    "app",
    "client_address",
    "connection_limits",
    "errors",
    "identity",
    "limits",
    "rate_limit",
    "routes",
    "schemas",
    "security_headers",
]

"""The HTTP routes. Each handler declares what it needs; `services: AppServices` brings the app's services."""

from __future__ import annotations

from typing import TypeAlias

from litestar.params import SkipValidation

from threadline.services import Services

# Injected as they are: msgspec has nothing to validate in the services themselves.
AppServices: TypeAlias = SkipValidation[Services]

"""What the HTTP app serves from, shared by its route modules."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hallouminate.config.types import HttpSettings
from hallouminate.http.local import Dispatcher, LocalLink


@dataclass(frozen=True)
class HttpContext:
    """What the app serves from: the daemon's dispatcher, the ``[http]`` settings and the scope
    directory of the faces that take no cwd (KuraDB's, the REST search, the operator page)."""

    dispatcher: Dispatcher
    settings: HttpSettings
    root: Path

    @property
    def link(self) -> LocalLink:
        return LocalLink(self.dispatcher)

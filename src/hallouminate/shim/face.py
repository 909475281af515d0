"""What every face's tool is to the server (shim/server.py): its published schemas and annotations, how it
runs on the daemon and how its answer reads as text. Our tools (shim/tools.py ``ToolSpec``), GrooveSeek's
(shim/grooveseek.py) and KuraDB's (shim/kuradb.py) all have this shape; ``FaceTool`` is the other faces'."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

# One daemon call of a face tool: (op, args) -> the op's result; the face binds cwd and kb.
Call = Callable[[str, dict[str, Any]], Awaitable[Any]]


def as_json(result: Any) -> str:
    """A face answer as text: its JSON (GrooveSeek's and KuraDB's clients read the text block)."""
    return json.dumps(result, ensure_ascii=False, indent=2)


@dataclass(frozen=True)
class FaceTool:
    """One tool of a dialect face: its published schemas and annotations, and how it runs on the daemon."""

    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    run: Callable[[Call, dict[str, Any]], Awaitable[Any]]
    read_only: bool = True
    destructive: bool = False
    idempotent: bool = True
    # The op the tool mostly calls: named in logs; ``index`` gets progress notifications.
    op: str = ""
    # Checks the arguments and raises the face's own message (KuraDB's "invalid argument: ..."); None:
    # the input schema's check (protocol/validation.py).
    check: Callable[[dict[str, Any]], None] | None = None

    def text(self, result: Any) -> str:
        return as_json(result)

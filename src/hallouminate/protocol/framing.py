"""Length-prefixed msgpack frames."""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Mapping
from typing import Any

import msgpack

from hallouminate.errors import BadEncoding, BadRequest

HEADER = struct.Struct(">I")
# Requests and answers above this size are refused: it bounds what a peer can make the other side buffer.
MAX_FRAME = 4 * 1024 * 1024


class FrameError(BadRequest):
    """A frame that cannot be decoded (the stream itself is still in sync)."""


class FrameTooLarge(BadRequest):
    """A frame whose declared length exceeds MAX_FRAME (the stream cannot be resynchronised)."""


class FrameNotUnicode(BadEncoding):
    """A frame whose strings are not valid UTF-8: refused, answered under the request's id when it has one."""

    def __init__(self, message: str, data: Mapping[str, Any], request_id: int | str | None) -> None:
        super().__init__(message, data)
        self.request_id = request_id


class FrameStalled(BadRequest):
    """A frame begun but not finished in time (a stalled or hostile peer; the stream is abandoned)."""


def encode_frame(message: Mapping[str, object], *, limit: int = MAX_FRAME) -> bytes:
    try:
        body: bytes = msgpack.packb(message, use_bin_type=True)  # msgpack has no type hints
    except UnicodeEncodeError as exc:  # a lone surrogate has no UTF-8 form
        raise BadEncoding(
            f"the message holds text that is not valid Unicode (a lone surrogate at character {exc.start}); "
            "send valid UTF-8 text",
            {"problem": "encoding", "offset": exc.start},
        ) from None
    if len(body) > limit:
        raise FrameTooLarge(
            f"message of {len(body)} bytes exceeds the {limit}-byte frame limit",
            {"limit": limit, "size": len(body)},
        )
    return HEADER.pack(len(body)) + body


async def read_frame(
    reader: asyncio.StreamReader, *, limit: int = MAX_FRAME, stall_timeout: float | None = None
) -> bytes | None:
    """Read one frame body; ``None`` on a clean end of stream between frames.

    Raises ``FrameTooLarge`` before reading the body of an oversized frame,
    ``asyncio.IncompleteReadError`` when the peer hangs up mid-frame, and ``FrameStalled`` when a frame
    that has begun is not complete within ``stall_timeout`` seconds. Waiting *between* frames is never
    timed: an idle connection is legitimate.
    """
    first = await reader.read(1)
    if not first:
        return None

    async def rest() -> bytes:
        header = first + await reader.readexactly(HEADER.size - 1)
        (length,) = HEADER.unpack(header)
        if length > limit:
            raise FrameTooLarge(
                f"frame of {length} bytes exceeds the {limit}-byte limit; split the request",
                {"limit": limit, "size": length},
            )
        return await reader.readexactly(length)

    if stall_timeout is None:
        return await rest()
    try:
        return await asyncio.wait_for(rest(), stall_timeout)
    except TimeoutError:
        raise FrameStalled(
            f"a frame was begun but not finished within {stall_timeout:g} s; send whole frames",
            {"timeout": stall_timeout},
        ) from None


def decode_body(body: bytes) -> Any:
    try:
        # Sizes are bounded by the frame (MAX_FRAME); int map keys are refused.
        return msgpack.unpackb(body, raw=False, strict_map_key=True)
    except UnicodeDecodeError as exc:
        raise _not_unicode(body, exc) from None
    except Exception as exc:  # msgpack raises several unrelated exception types
        raise FrameError(f"frame body is not valid msgpack: {exc}") from None


def _not_unicode(body: bytes, exc: UnicodeDecodeError) -> FrameNotUnicode:
    """Strings that are not UTF-8: decoded once more, leniently, only to find the id to answer under."""
    request_id: int | str | None = None
    try:
        lenient = msgpack.unpackb(body, raw=False, strict_map_key=True, unicode_errors="surrogateescape")
    except Exception:
        lenient = None
    if isinstance(lenient, dict):
        rid = lenient.get("id")
        if isinstance(rid, int) and not isinstance(rid, bool):
            request_id = rid
        elif isinstance(rid, str) and rid.encode("utf-8", "replace").decode("utf-8") == rid:
            request_id = rid  # an id that is itself not UTF-8 could not be sent back
    return FrameNotUnicode(
        f"the request holds a string that is not valid UTF-8 (byte {exc.start} of that string); "
        "send text as UTF-8",
        {"problem": "encoding", "offset": exc.start},
        request_id,
    )

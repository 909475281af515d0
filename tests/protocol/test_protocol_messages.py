"""The wire format, checked without a daemon: frames, envelopes and argument validation."""

from __future__ import annotations

import asyncio

import msgpack
import pytest

from hallouminate.errors import InvalidParams
from hallouminate.protocol import (
    MAX_FRAME,
    FrameError,
    FrameTooLarge,
    decode_body,
    encode_frame,
    parse_request,
    read_frame,
    request_message,
)
from hallouminate.protocol.schemas import ARGS
from hallouminate.protocol.validation import validate_args


async def _read(data: bytes) -> bytes | None:
    reader = asyncio.StreamReader()
    reader.feed_data(data)
    reader.feed_eof()
    return await read_frame(reader)


async def test_a_frame_is_a_big_endian_length_then_msgpack() -> None:
    frame = encode_frame({"a": 1})
    body = msgpack.packb({"a": 1})
    assert frame == len(body).to_bytes(4, "big") + body
    assert decode_body(await _read(frame) or b"") == {"a": 1}


async def test_clean_end_of_stream_is_none_and_a_cut_frame_is_an_error() -> None:
    assert await _read(b"") is None
    with pytest.raises(asyncio.IncompleteReadError):
        await _read(encode_frame({"a": "b" * 100})[:20])


async def test_an_oversized_frame_is_refused_before_its_body_is_read() -> None:
    with pytest.raises(FrameTooLarge, match="exceeds"):
        await _read((MAX_FRAME + 1).to_bytes(4, "big"))
    with pytest.raises(FrameTooLarge):
        encode_frame({"x": b"\0" * (MAX_FRAME + 1)})


def test_garbage_is_a_frame_error_that_is_invalid_params() -> None:
    with pytest.raises(FrameError) as info:
        decode_body(b"\xc1\xc1\xc1")
    assert info.value.kind == "invalid_params"


@pytest.mark.parametrize(
    ("message", "problem"),
    [
        ([1, 2], "must be a msgpack map"),
        ({"v": 1, "id": 1, "op": "ping", "cwd": None}, "missing field"),
        ({"v": 9, "id": 1, "op": "ping", "cwd": None, "args": {}}, "protocol version"),
        ({"v": 1, "id": 1.5, "op": "ping", "cwd": None, "args": {}}, "'id'"),
        ({"v": 1, "id": 1, "op": "", "cwd": None, "args": {}}, "'op'"),
        ({"v": 1, "id": 1, "op": "ping", "cwd": 3, "args": {}}, "'cwd'"),
        ({"v": 1, "id": 1, "op": "ping", "cwd": None, "args": []}, "'args'"),
    ],
)
def test_malformed_envelopes_name_the_problem(message: object, problem: str) -> None:
    with pytest.raises(InvalidParams, match=problem):
        parse_request(message)


def test_a_well_formed_request_parses() -> None:
    request = parse_request(request_message(7, "ground", "/x", {"query": "q"}, stream=True))
    assert (request.id, request.op, request.cwd, request.args, request.stream) == (
        7,
        "ground",
        "/x",
        {"query": "q"},
        True,
    )


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({}, "'query' is a required property"),
        ({"query": ""}, "length >= 1"),
        ({"query": "q", "top_files": 0}, "'top_files' must be >= 1"),
        ({"query": "q", "limit": 5000}, "'limit' must be <= 1000"),
        ({"query": "q", "top_files": "3"}, "must be of type integer"),
        ({"query": "q", "colour": "red"}, "not allowed"),
    ],
)
def test_ground_arguments_are_bounded_and_explained(args: dict[str, object], problem: str) -> None:
    with pytest.raises(InvalidParams, match=problem):
        validate_args(ARGS["ground"], args, "ground arguments")

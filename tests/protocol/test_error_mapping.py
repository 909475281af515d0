"""The one mapping from errors to the wire, JSON-RPC and exit codes, and the wire round trip.

Every class the daemon can name is rebuilt as itself by a client, through real frames; a subclass travels
as its nearest named class; an answer without ``type`` (a daemon predating it) falls back to the kind.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS

from hallouminate import errors
from hallouminate.client import DaemonUnavailable
from hallouminate.errors import (
    CALLER,
    FAULT,
    TRANSIENT,
    CallerError,
    Conflict,
    Fault,
    HallouminateError,
    InvalidArgument,
    NotFound,
    Transient,
    Unavailable,
    UnsafePath,
    from_wire,
    public_data,
    to_wire,
)
from hallouminate.model import ModelInstallError
from hallouminate.protocol import decode_body, encode_frame, error_response
from hallouminate.protocol.framing import HEADER, FrameTooLarge
from hallouminate.sandbox import PathMissing, changed, refuse
from hallouminate.shim.errors import to_mcp_error
from hallouminate.wiki.atomic import AlreadyExists

DATA = {"path": "guides/setup.md", "problem": "exists", "closest": ["guides/setup.md"], "limit": 7}


def _over_the_wire(error: HallouminateError) -> HallouminateError:
    """``error`` as a daemon answers it and a client reads it back: frame, msgpack and all."""
    frame = encode_frame(error_response(7, error))
    answer = decode_body(frame[HEADER.size :])
    assert answer["ok"] is False and answer["id"] == 7
    return from_wire(answer["error"])


def test_the_families_say_who_acts_and_match_the_sdk_codes() -> None:
    assert (CALLER.kind, CALLER.jsonrpc_code, CALLER.retryable, CALLER.exit_code) == (
        "invalid_params",
        INVALID_PARAMS,
        False,
        2,
    )
    assert (FAULT.kind, FAULT.jsonrpc_code, FAULT.retryable, FAULT.exit_code) == (
        "internal",
        INTERNAL_ERROR,
        False,
        1,
    )
    assert (TRANSIENT.kind, TRANSIENT.jsonrpc_code, TRANSIENT.retryable, TRANSIENT.exit_code) == (
        "retryable",
        INTERNAL_ERROR,
        True,
        1,
    )
    # Every named class belongs to exactly one family, and its wire name is unique.
    for name, cls in errors.TYPES.items():
        assert cls.wire_type == name
        assert [issubclass(cls, base) for base in (CallerError, Fault, Transient)].count(True) == 1


def test_the_wire_names_are_the_families() -> None:
    # Kept so code written against protocol 1's names still catches the same errors.
    assert errors.InvalidParams is CallerError
    assert errors.Internal is Fault
    assert errors.Retryable is Transient


@pytest.mark.parametrize("cls", list(errors.TYPES.values()), ids=list(errors.TYPES))
def test_every_named_class_comes_back_as_itself(cls: type[HallouminateError]) -> None:
    sent = cls("what went wrong; how to fix it", DATA)
    back = _over_the_wire(sent)
    assert type(back) is cls
    assert (back.message, back.data, back.kind) == (sent.message, sent.data, sent.kind)
    mcp = to_mcp_error(back)
    assert mcp.error.code == cls.family.jsonrpc_code
    expected = {**DATA, "retryable": True} if cls.family.retryable else DATA
    assert mcp.error.data == expected


@pytest.mark.parametrize(
    ("error", "named"),
    [
        (PathMissing(Path("/r"), "a/b.md", 1), NotFound),
        (AlreadyExists("'a.md' already exists", {"path": "a.md", "problem": "exists"}), Conflict),
        (changed("a.md", "it changed on disk during the write"), Conflict),
        (refuse("../a.md", "it has a '..' segment", "dot-dot"), UnsafePath),
        (FrameTooLarge("message too large", {"limit": 1, "size": 2}), errors.BadRequest),
        (ModelInstallError("sha256 mismatch"), errors.ModelUnavailable),
        (DaemonUnavailable("no daemon answers", {"socket": "/s", "log": "/l"}), Unavailable),
    ],
)
def test_a_subsystem_error_travels_as_its_nearest_named_class(error: HallouminateError, named: type) -> None:
    back = _over_the_wire(error)
    assert type(back) is named and back.data == error.data and back.message == error.message


def test_retryable_is_set_by_the_mapping_alone() -> None:
    busy = Unavailable("daemon busy (64 connections open); retry shortly")
    assert busy.data == {}
    wire = to_wire(busy)
    assert wire == {
        "kind": "retryable",
        "type": "unavailable",
        "message": busy.message,
        "data": {"retryable": True},
    }
    assert public_data(NotFound("x", {"corpus": "c"})) == {"corpus": "c"}
    # Read back, the flag is the family's again, not part of the error's own data.
    back = from_wire(wire)
    assert type(back) is Unavailable and back.data == {} and back.retryable


@pytest.mark.parametrize(
    ("answer", "cls"),
    [
        # A daemon predating `type`: the kind decides, as before.
        ({"kind": "invalid_params", "message": "m", "data": {"closest": "x"}}, CallerError),
        ({"kind": "internal", "message": "m", "data": None}, Fault),
        ({"kind": "retryable", "message": "m", "data": {"retryable": True}}, Transient),
        # A type this side does not know, or one that contradicts the kind: the kind wins.
        ({"kind": "invalid_params", "type": "from_the_future", "message": "m"}, CallerError),
        ({"kind": "internal", "type": "not_found", "message": "m"}, Fault),
        # An unknown kind is a fault of ours, never a caller mistake.
        ({"kind": "strange", "type": "not_found", "message": "m"}, Fault),
        ({}, Fault),
    ],
)
def test_an_answer_without_a_known_type_falls_back_to_its_kind(answer: dict[str, Any], cls: type) -> None:
    back = from_wire(answer)
    assert type(back) is cls
    assert back.message == (answer.get("message") or "the daemon reported an error without a message")
    assert "retryable" not in back.data


def test_reworded_keeps_class_data_and_attributes() -> None:
    missing = PathMissing(Path("/r"), "a/b.md", 1)
    again = missing.reworded(f"not a corpus-relative path: {missing.message}")
    assert type(again) is PathMissing and (again.rel, again.existing) == ("a/b.md", 1)
    assert again.message == str(again) == "not a corpus-relative path: 'a/b.md' does not exist"
    assert again.data == missing.data and again.data is not missing.data
    assert missing.message == "'a/b.md' does not exist"
    assert isinstance(InvalidArgument("x").reworded("y"), InvalidArgument)

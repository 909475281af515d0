"""The ``kb://`` MCP resources of one scope: ``resources/list`` (topic groups), the ``kb://doc/{path}``
template and ``resources/read``, each forwarded to the daemon (``resource_groups``, ``read_resource``).

A scope is ``(cwd, kb)``, as a request's envelope carries it: the default face serves the directory the
shim was started in (an MCP host starts its server in the project) as a plain cwd, whose default corpus
the resources offer; the GrooveSeek face serves its knowledge base (``kb=True``). Resources take no
``cwd`` argument in MCP, hence the scope is fixed when the server is built. Neither subscriptions nor
``list_changed`` are offered (docs/adr/0037-kb-resources.md).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp import MCPError
from mcp.types import (
    ListResourcesResult,
    ListResourceTemplatesResult,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    TextResourceContents,
)

from hallouminate.client import DaemonUnavailable
from hallouminate.errors import Bug, HallouminateError
from hallouminate.protocol.cwd import canonical_cwd
from hallouminate.protocol.kb_uri import DOC_TEMPLATE
from hallouminate.protocol.results import ReadResourceResult as ReadAnswer
from hallouminate.protocol.results import ResourceGroupsResult
from hallouminate.shim.errors import to_mcp_error
from hallouminate.shim.link import Calls

log = logging.getLogger("hallouminate.shim")

Connect = Callable[[], Awaitable[Calls]]

TEMPLATE_DESCRIPTION = (
    "One indexed document by its path, exactly as `ground` returns it, percent-encoded except for "
    "A-Z a-z 0-9 - . _ ~ /. Markdown is served as text/markdown, other text and a document's extracted text "
    "(PDF, Office, sheets, HTML, code) as text/plain (cut at 1 MiB, with a marker). The `uri` of a `ground` hit is this URI."
)


class KbResources:
    """The resources of the scope ``(cwd, kb)``, read through the daemon reached by ``connect``."""

    def __init__(self, connect: Connect, cwd: str | Path, *, kb: bool = False) -> None:
        self._connect = connect
        self._cwd = str(cwd)
        self._kb = kb

    def handlers(self) -> dict[str, Any]:
        """The low-level ``Server``'s keyword arguments that serve these resources."""
        return {
            "on_list_resources": self.list_resources,
            "on_list_resource_templates": self.list_templates,
            "on_read_resource": self.read_resource,
        }

    async def _call(self, op: str, args: dict[str, Any]) -> Any:
        try:
            cwd = str(canonical_cwd(self._cwd))
            for attempt in (1, 2):
                conn = await self._connect()
                try:
                    return await conn.call(op, cwd, args, kb=self._kb)
                except DaemonUnavailable:
                    if attempt == 2:  # both reads are idempotent: sent once more to a fresh daemon
                        raise
        except HallouminateError as exc:
            raise to_mcp_error(exc) from None
        except MCPError:
            raise
        except Exception as exc:  # never a raw traceback or JSON-RPC code 0
            log.exception("%s failed", op)
            raise to_mcp_error(Bug(f"{op} failed in the MCP server: {type(exc).__name__}: {exc}")) from None
        raise AssertionError("unreachable")

    async def list_resources(self, ctx: Any, params: Any) -> ListResourcesResult:
        answer: ResourceGroupsResult = await self._call("resource_groups", {})
        return ListResourcesResult(
            resources=[
                Resource(
                    name=group["name"],
                    uri=group["uri"],
                    description=group["description"],
                    mime_type="text/markdown",
                )
                for group in answer["groups"]
            ]
        )

    async def list_templates(self, ctx: Any, params: Any) -> ListResourceTemplatesResult:
        return ListResourceTemplatesResult(
            resource_templates=[
                ResourceTemplate(name="document", uri_template=DOC_TEMPLATE, description=TEMPLATE_DESCRIPTION)
            ]
        )

    async def read_resource(self, ctx: Any, params: ReadResourceRequestParams) -> ReadResourceResult:
        answer: ReadAnswer = await self._call("read_resource", {"uri": str(params.uri)})
        return ReadResourceResult(
            contents=[
                TextResourceContents(uri=answer["uri"], mime_type=answer["mime_type"], text=answer["text"])
            ]
        )

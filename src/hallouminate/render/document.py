"""Text for ``get_document``: a short header of its metadata, then the document itself."""

from __future__ import annotations

from hallouminate.protocol.results import GetDocumentResult


def render_document(result: GetDocumentResult) -> str:
    facts = [f"{result['corpus']}: {result['path']}", f"title: {result['title']}"]
    for key in ("date", "topic", "category"):
        value = result.get(key)
        if value:
            facts.append(f"{key}: {value}")
    if result.get("tags"):
        facts.append("tags: " + ", ".join(result["tags"]))
    if "uri" in result:
        facts.append(f"uri: {result['uri']}")
    if result["truncated"]:
        facts.append("truncated: the extracted text is cut at 1 MiB")
    header = "\n".join(facts)
    return f"{header}\n\n{result['content']}"

"""``get_best_practice``: the page ``[best_practice] path_templates`` names for a target, whole or one H2
section, read through the sandbox.

The templates are configuration, not something a caller should learn: no answer, result or error names
them or the path they gave (GrooveSeek's rule). ``target`` fills one path segment, so it may hold no
``/``, ``\\``, ``..`` or control character; the path it makes is read only if it is a file of the corpus
(``locate``: the corpus' patterns, ignore files, no symlink on the way) and through ``open_for_read``.
"""

from __future__ import annotations

from hallouminate.config import CorpusSpec
from hallouminate.config.layer import TARGET_PLACEHOLDER
from hallouminate.errors import BadEncoding, CallerError, ConfigError, InvalidArgument, NotFound, TooLarge
from hallouminate.indexing.markdown_tree import parse_blocks
from hallouminate.indexing.walker import locate
from hallouminate.protocol.limits import PAGE_MAX_BYTES
from hallouminate.protocol.results import BestPracticeResult
from hallouminate.sandbox import PathMissing, open_for_read

NOT_CONFIGURED = (
    "get_best_practice is not configured: set [best_practice] path_templates (paths relative to the "
    'corpus root holding {target}, e.g. ["best-practices/{target}.md"]) in the configuration; see '
    "docs/configuration.md"
)


def best_practice(
    spec: CorpusSpec, templates: tuple[str, ...], target: str, category: str | None
) -> BestPracticeResult:
    """``{target, category?, content}``: the first template's page that is a file of ``spec``."""
    require_configured(templates)
    check_target(target)
    for template in templates:
        content = _read(spec, template.replace(TARGET_PLACEHOLDER, target), target)
        if content is None:
            continue
        if category is None:
            return {"target": target, "content": content}
        return {"target": target, "category": category, "content": section(content, target, category)}
    raise NotFound(
        f"no best-practice page for target {target!r} in corpus {spec.name!r}",
        {"problem": "no-page", "target": target, "corpus": spec.name},
    )


def require_configured(templates: tuple[str, ...]) -> None:
    if not templates:
        raise ConfigError(
            NOT_CONFIGURED, {"problem": "not-configured", "key": "best_practice.path_templates"}
        )


def check_target(target: str) -> None:
    """Refuse a target that is not one plain path segment (before any path is made of it)."""
    problem = None
    if not target.strip():
        problem = "is empty"
    elif "/" in target or "\\" in target:
        problem = "holds a '/' or '\\' (a target names one page, not a path)"
    elif ".." in target or target == ".":
        problem = "holds '..' or is '.'"
    elif any(not c.isprintable() for c in target):
        problem = "holds a control character"
    if problem is not None:
        raise InvalidArgument(
            f"target {target!r} {problem}; pass a plain name such as 'claude-code'",
            {"param": "target", "problem": "bad-target"},
        )


def _read(spec: CorpusSpec, rel: str, target: str) -> str | None:
    """The text of the corpus file ``rel``, or None when it is none (absent, not listed, unsafe)."""
    try:
        root = locate(spec, rel)
    except CallerError:  # a template and target that make no safe path: no page there
        return None
    if root is None:
        return None
    try:
        data = open_for_read(root, rel, max_bytes=PAGE_MAX_BYTES)
    except PathMissing:  # removed since it was located
        return None
    except TooLarge:
        raise TooLarge(
            f"the best-practice page for target {target!r} is larger than {PAGE_MAX_BYTES} bytes",
            {"target": target, "limit": PAGE_MAX_BYTES},
        ) from None
    except CallerError:  # swapped for a link or a directory since it was located
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadEncoding(
            f"the best-practice page for target {target!r} is not UTF-8 text (invalid byte at offset "
            f"{exc.start})",
            {"target": target, "offset": exc.start},
        ) from None


def section(content: str, target: str, category: str) -> str:
    """The H2 section titled ``category`` (case-insensitive), heading line included, up to the next
    heading of level 1 or 2; ``NotFound`` listing the page's H2 headings otherwise."""
    text = content.replace("\r\n", "\n")
    lines = text.split("\n")
    # Headings as markdown-it sees them: a '## ' line in a code fence is no heading.
    headings = [
        (block.start, block.heading_level, block.plain_text())
        for block in parse_blocks(text)
        if block.heading_level is not None and block.heading_level <= 2
    ]
    sections = [(start, title) for start, level, title in headings if level == 2]
    wanted = " ".join(category.split()).casefold()
    for start, title in sections:
        if title.casefold() == wanted:
            end = next((line for line, _, _ in headings if line > start), len(lines))
            return "\n".join(lines[start:end]).strip("\n") + "\n"
    listed = ", ".join(repr(title) for _, title in sections) if sections else "none"
    raise NotFound(
        f"the best-practice page for target {target!r} has no section {category!r}; its H2 sections: {listed}",
        {
            "problem": "no-section",
            "target": target,
            "category": category,
            "sections": [t for _, t in sections],
        },
    )

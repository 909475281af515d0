"""A summary of an ``index`` result: one line per corpus, then the skipped files."""

from __future__ import annotations

from hallouminate.protocol.results import IndexResult


def render_index(result: IndexResult) -> str:
    lines = []
    for report in result.get("corpora", []):
        lines.append(
            f"{report['corpus']}: {report['files_upserted']} upserted, {report['files_touched']} touched, "
            f"{report['files_deleted']} deleted, {report['files_skipped']} skipped, "
            f"{report['chunks_written']} chunks written in {report['seconds']:.2f} s"
        )
        for skipped in report.get("skipped", []):
            lines.append(f"  skipped {skipped['path']}: {skipped['reason']}")
        for bad in report.get("frontmatter_errors", []):
            lines.append(f"  indexed as text {bad['path']}: {bad['reason']}")
    lines.append(f"done in {result.get('seconds', 0):.2f} s")
    for warning in result.get("warnings", []):
        lines.append(f"warning [{warning.get('code')}]: {warning.get('message')}")
    return "\n".join(lines)

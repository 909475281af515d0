"""A summary of an ``index`` result: one line per corpus, then what the daemon indexed on its own before
it, then the corpus' file problems."""

from __future__ import annotations

from hallouminate.protocol.results import IndexResult
from hallouminate.render.problems import render_background, render_problems


def render_index(result: IndexResult) -> str:
    lines = []
    for report in result.get("corpora", []):
        lines.append(
            f"{report['corpus']}: {report['files_upserted']} upserted, {report['files_touched']} touched, "
            f"{report['files_deleted']} deleted, {report['files_skipped']} skipped, "
            f"{report['chunks_written']} chunks written in {report['seconds']:.2f} s"
        )
        if report.get("forced"):
            lines.append("  rebuilt: every file read and embedded again")
        if report.get("renamed"):
            lines.append(f"  {report['renamed']} renamed (rows moved to the new path, not re-embedded)")
        for refused in report.get("refused", []):
            lines.append(
                f"  {refused['chunks_refused']} of {refused['chunks']} chunks of {refused['path']} refused by the "
                f"embedding endpoint: {refused['reason']}"
            )
        if "chunks_total" in report:
            lines.append(f"  {report['chunks_total']} chunks in the corpus now")
        # The daemon's own runs since the last report: after a restart, the catch-up has often done it all.
        lines.extend(f"  {render_background(work)}" for work in report.get("background", []))
        if "problems" in report:  # every problem the corpus' files have now, this run's among them
            lines.extend(render_problems(report["problems"]))
        else:
            for skipped in report.get("skipped", []):
                lines.append(f"  skipped {skipped['path']}: {skipped['reason']}")
            for bad in report.get("frontmatter_errors", []):
                lines.append(f"  indexed as text {bad['path']}: {bad['reason']}")
        if "error" in report:  # [indexing] fail_on_frontmatter_error
            lines.append(f"  error: {report['error']}")
    lines.append(f"done in {result.get('seconds', 0):.2f} s")
    for warning in result.get("warnings", []):
        lines.append(f"warning [{warning.get('code')}]: {warning.get('message')}")
    return "\n".join(lines)

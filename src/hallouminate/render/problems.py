"""Text for the file problems index runs record and for the daemon's own index runs (catch-up, watcher)."""

from __future__ import annotations

from datetime import UTC, datetime

from hallouminate.protocol.results import BackgroundWork, FileProblem

# Lines of problems shown in text; the structured result (`--format json`) lists every one.
SHOWN_PROBLEMS = 20

_BY = {"catch-up": "the catch-up of edits made while no daemon watched", "watcher": "the watcher"}


def clock(ms: int) -> str:
    """A UTC time (as ``corpus_stats`` shows its dates), with the date when it is not today's."""
    moment = datetime.fromtimestamp(ms / 1000, UTC)
    if moment.date() == datetime.now(UTC).date():
        return moment.strftime("%H:%M:%S UTC")
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def render_background(work: BackgroundWork) -> str:
    """One line: what the catch-up or the watcher indexed before the run reported."""
    if work["runs"] == 1:
        when = f"at {clock(work['last_ms'])}"
    else:
        when = f"{work['runs']} runs, {clock(work['first_ms'])} to {clock(work['last_ms'])}"
    return (
        f"earlier, by {_BY.get(work['by'], work['by'])} ({when}): {work['files_upserted']} upserted, "
        f"{work['files_touched']} touched, {work['files_deleted']} deleted, {work['files_skipped']} "
        f"skipped, {work['chunks_written']} chunks written"
    )


def render_problem(problem: FileProblem) -> str:
    if not problem["indexed"]:
        what = "skipped"
    else:
        indexed = {"cut": "indexed up to the cut", "refused": "indexed without the refused chunks"}
        what = indexed.get(problem["problem"], "indexed as text")
    return f"{problem['path']}: {problem['problem']} ({what}): {problem['detail']}"


def render_problems(problems: list[FileProblem], indent: str = "  ") -> list[str]:
    """``problems (N):`` then one line per file (the first ``SHOWN_PROBLEMS``); nothing when there are none."""
    if not problems:
        return []
    lines = [f"{indent}problems ({len(problems)}):"]
    lines.extend(f"{indent}  {render_problem(problem)}" for problem in problems[:SHOWN_PROBLEMS])
    if len(problems) > SHOWN_PROBLEMS:
        lines.append(
            f"{indent}  ... and {len(problems) - SHOWN_PROBLEMS} more (the JSON result lists them all)"
        )
    return lines

"""Bring a corpus' rows in the store up to date with its files on disk.

Change gate, cheapest first: size and mtime equal to the stored values -> the file is not even read; same
content hash -> only the stored stat is refreshed ("touched"); otherwise re-chunk and re-embed. A file
that cannot be read, is binary, is not UTF-8 or is too large is skipped and reported, and keeps its old
rows: one bad file never aborts a run. A page with no text is skipped too (its old rows go). Each file's
problem is recorded (``problems.py``) until a run reads it clean. Embedding runs in batches of 32 chunks
across files; each file's rows are written in one commit once all its chunks have vectors.

A Markdown file new to the store whose bytes are those of a Markdown file gone from it was renamed: its
rows move to the new path without re-embedding (nothing a Markdown chunk holds depends on its path), in
the commit that deletes the old path's rows. A forced run (``force``) skips every shortcut: each file is
read, chunked and embedded again, replacing its rows file by file, so a run killed half-way leaves every
file wholly old or wholly new and nothing dropped (docs/adr/0039-index-single-flight.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from array import array
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from hallouminate.config import CorpusSpec, Settings
from hallouminate.errors import CallerError, TooLarge
from hallouminate.indexing.chunker import Chunk, MarkdownPage, chunk_markdown
from hallouminate.indexing.documents import ChunkContext, FormatLimits
from hallouminate.indexing.json_chunker import chunk_json
from hallouminate.indexing.keywords import frontmatter_tags, page_keywords, tags_from_fields
from hallouminate.indexing.problems import ProblemLog
from hallouminate.indexing.quality import chunk_quality
from hallouminate.indexing.text_chunker import TextChunk, TextPage, UnparseableFile, chunk_text
from hallouminate.indexing.walker import corpus_files, locate
from hallouminate.indexing.zipguard import OverBudget
from hallouminate.ports import ChunkWrite, EmbedderPort, FileStateLike, RefusedInputs, StorePort, Vector
from hallouminate.protocol.results import (
    FileProblem,
    FileProblemKind,
    IndexReport,
    ProgressEvent,
    RefusedChunks,
    SkippedFile,
)
from hallouminate.sandbox import file_format, is_markdown, read_file
from hallouminate.sandbox.formats import is_binary_format

Progress = Callable[[ProgressEvent], None]

EMBED_BATCH = 32
# Chunks gathered before embedding, then sorted by length: a batch is padded to its longest text, and one
# long chunk among 31 short ones made the batch ~17x slower when measured.
EMBED_WINDOW = 8 * EMBED_BATCH
# Commit once this many rows are ready: fewer, larger commits keep the fragment count down.
FLUSH_ROWS = 512
PROGRESS_EVERY_SECS = 0.5
# [CLS] and [SEP] are part of the model's input but not of count_tokens().
SPECIAL_TOKENS = 2


class Indexer:
    def __init__(
        self,
        store: StorePort,
        embedder: EmbedderPort,
        settings: Settings,
        problems: ProblemLog | None = None,
        limits: FormatLimits | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings
        # The daemon's is kept beside the store; without one, in memory for this indexer's life.
        self.problems = problems if problems is not None else ProblemLog(None)
        self.budget = min(settings.chunk_tokens, embedder.max_tokens) - SPECIAL_TOKENS
        # The readers' limits: the [indexing] settings', unless the caller gives its own (tighter ones).
        self.limits = limits if limits is not None else format_limits(settings)
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()

    def _lock(self, corpus: str) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault(corpus, threading.Lock())

    def index_corpus(
        self, spec: CorpusSpec, progress: Progress | None = None, *, force: bool = False
    ) -> IndexReport:
        """Index every file of ``spec``; files gone from disk lose their rows. ``force``: every file is
        read and embedded again, whatever its stored stat and hash say (a full rebuild)."""
        with self._lock(spec.store_key):
            run = _Run(self, spec, progress, force=force)
            files = corpus_files(spec)
            on_disk = {rel for rel, _ in files}
            gone = sorted(p for p in run.states if p not in on_disk)
            # A skipped file has no rows, so no state: its problem goes when it leaves the corpus.
            run.cleared.update(p for p in run.recorded if p not in on_disk)
            return run.execute(files, gone)

    def index_paths(
        self, spec: CorpusSpec, paths: list[str], progress: Progress | None = None
    ) -> IndexReport:
        """Refresh only these corpus-relative files (after a write or delete, or a watcher batch).

        A path the corpus would not list (``locate``: ignored, excluded, a symlink on the way) is never
        read, whoever names it; its rows, if any, go.
        """
        with self._lock(spec.store_key):
            run = _Run(self, spec, progress)
            files: list[tuple[str, Path]] = []
            gone: list[str] = []
            for rel in sorted(set(paths)):
                try:
                    root = locate(spec, rel)
                except CallerError as exc:
                    raise exc.reworded(f"not a corpus-relative path: {exc.message}") from None
                if root is not None:
                    files.append((rel, root))
                else:
                    run.cleared.add(rel)
                    if rel in run.states:
                        gone.append(rel)
            return run.execute(files, gone)


def format_limits(settings: Settings) -> FormatLimits:
    """What a document reader may spend on one file, from the ``[indexing]`` settings."""
    return FormatLimits(max_decompressed_size=settings.max_decompressed_size)


def size_cap(settings: Settings, rel: str) -> tuple[int, str]:
    """The largest ``rel`` the indexer reads, and the ``[indexing]`` key setting it: binary documents
    (PDF, Office, OpenDocument) have their own cap, every other file the text one."""
    if is_binary_format(rel):
        return settings.max_binary_file_size, "max_binary_file_size"
    return settings.max_file_bytes, "max_text_file_size"


def chunk_file(
    rel: str,
    data: bytes,
    count_tokens: Callable[[str], int],
    budget: int,
    limits: FormatLimits | None = None,
) -> MarkdownPage | TextPage:
    """Chunk one file by its format (from its extension); Markdown for anything not listed."""
    kind = file_format(rel)
    title = PurePosixPath(rel).name
    # Here, not at the top: the readers' libraries (openpyxl loads numpy) stay out of the light processes
    # that import this package for its walker or chunker (the read tools, the CLI).
    from hallouminate.indexing.readers import reader_for

    reader = reader_for(rel)
    if reader is not None:
        ctx = ChunkContext(rel, title, count_tokens, budget, limits or FormatLimits())
        return reader.chunk(data, ctx)
    if kind not in ("markdown", "text", "json"):
        raise UnparseableFile(f"no reader for {kind} files in this version")
    text = data.decode("utf-8-sig")
    if kind == "text":
        return chunk_text(text, count_tokens, budget, title=title)
    if kind == "json":
        return chunk_json(text, count_tokens, budget, title=title)
    return chunk_markdown(text, count_tokens, budget)


def frontmatter_error(corpus: str, unparsed: int) -> str:
    """The ``error`` of an index report under ``[indexing] fail_on_frontmatter_error`` (GrooveSeek's rule)."""
    files = "1 file" if unparsed == 1 else f"{unparsed} files"
    return (
        f"{files} of corpus {corpus!r} {'has' if unparsed == 1 else 'have'} frontmatter that does not parse "
        "(indexed as plain text; `problems` names them): fix the frontmatter, or set [indexing] "
        "fail_on_frontmatter_error = false to index such files without an error"
    )


def _over_cap(key: str, cap: int, size: int | None) -> str:
    """The skip reason of a file over its kind's size cap, naming the key that raises it."""
    given = f"{size} > {cap}" if size is not None else f"> {cap}"
    return f"larger than [indexing] {key} ({given} bytes); raise {key} to index it"


# Formats whose breadcrumbs are the author's headings (a Word document's, an HTML page's), weighted as
# Markdown's are; the others' are a file name, a page, slide or sheet number, or a symbol name.
HEADED_FORMATS = frozenset(("docx", "html"))


@dataclass(frozen=True)
class _Crumbs:
    """A chunk as keywords see it: its breadcrumb without the file name standing in for a title."""

    heading_path: list[str]
    text: str


def file_keywords(rel: str, data: bytes, page: MarkdownPage | TextPage) -> list[str]:
    """The page's keywords. Markdown: frontmatter tags first, headings weighted; a Word document's and an
    HTML page's headings weighted too. The other formats' breadcrumbs are a file name or a page number,
    so only their chunk texts count."""
    chunks = list(page.chunks)
    if file_format(rel) in HEADED_FORMATS:
        # The breadcrumb's root is the document's own title, else its file name ("notes.docx"), which
        # is no word of the author's and would make "docx" a keyword of every untitled document.
        name = PurePosixPath(rel).name
        crumbs = [_Crumbs([h for h in chunk.heading_path if h != name], chunk.text) for chunk in chunks]
        return page_keywords(crumbs)
    if not is_markdown(rel):
        return page_keywords(chunks, headings=False)
    if isinstance(page, MarkdownPage):
        tags = tags_from_fields(page.fields)  # the chunker's own (YAML) reading of the frontmatter
    else:  # a chunker that does not expose the frontmatter: the minimal reader
        tags = frontmatter_tags(data.decode("utf-8-sig", errors="replace"))
    return page_keywords(chunks, tags=tags)


@dataclass
class _Pending:
    """A file whose chunks are waiting for vectors."""

    rel: str
    abs_path: Path
    size: int
    mtime_ns: int
    digest: str
    summary: str
    keywords: list[str]
    chunks: list[Chunk]
    # The page's frontmatter fields as JSON (null without frontmatter), kept for filters.
    fields_json: str | None = None
    vectors: list[Vector | None] = field(default_factory=list)
    filled: int = 0
    # Chunks the embedder refused (an endpoint's 400/413/422), by index, with its reason: left out.
    refused: dict[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Vectors arrive out of order (batches are sorted by length): one slot per chunk.
        self.vectors = [None] * len(self.chunks)

    @property
    def complete(self) -> bool:
        return self.filled == len(self.chunks)

    def rows(self) -> list[ChunkWrite]:
        # Called once complete: every slot holds its vector, but a refused chunk's (zip's strict check says
        # so otherwise).
        kept = [i for i in range(len(self.chunks)) if i not in self.refused]
        vectors = [vector for vector in self.vectors if vector is not None]
        return [
            {
                "abs_path": str(self.abs_path),
                "heading_path": chunk.heading_path,
                "line_start": chunk.line_start,
                "line_end": chunk.line_end,
                "text": chunk.text,
                "summary": self.summary,
                "content_hash": self.digest,
                "file_size": self.size,
                "file_mtime_ns": self.mtime_ns,
                "page": chunk.page if isinstance(chunk, TextChunk) else None,
                "symbol_kind": chunk.symbol_kind if isinstance(chunk, TextChunk) else None,
                "keywords": self.keywords,
                "fields": self.fields_json,
                "quality": chunk_quality(
                    chunk.text, chunk.heading_path, whole_page=len(self.chunks) == 1
                ).score,
                "vector": vector,
            }
            for chunk, vector in zip([self.chunks[i] for i in kept], vectors, strict=True)
        ]


class _Run:
    """One indexing pass over some files of one corpus."""

    def __init__(
        self, indexer: Indexer, spec: CorpusSpec, progress: Progress | None, *, force: bool = False
    ) -> None:
        self.store = indexer.store
        self.force = force
        self.embedder = indexer.embedder
        self.budget = indexer.budget
        self.settings = indexer.settings
        self.limits = indexer.limits
        self.spec = spec
        self.progress = progress
        self.started = time.perf_counter()
        self.states: Mapping[str, FileStateLike] = self.store.file_states(spec.store_key)  # our own copy
        # (file, chunk index) awaiting a vector.
        self.queue: list[tuple[_Pending, int]] = []
        self.ready: dict[str, list[ChunkWrite]] = {}
        self.ready_rows = 0
        self.touched: dict[str, tuple[int, int]] = {}
        self.skipped: list[SkippedFile] = []
        self.frontmatter_errors: list[SkippedFile] = []
        self.refused: list[RefusedChunks] = []
        # Problems as recorded before this run; what it found, and the files it read clean (or gone).
        self.log = indexer.problems
        self.recorded = self.log.get(spec.store_key)
        self.found: dict[str, FileProblem] = {}
        self.cleared: set[str] = set()
        self.upserted = 0
        self.chunks_written = 0
        self.last_progress = 0.0
        # Progress by bytes of the files this run reads (new or changed), not by files: files differ in
        # size, and unchanged ones cost a stat. A read file's bytes count as its chunks are embedded, each
        # chunk its share, so that the embedding (most of the time) moves the figure.
        self.bytes_total = 0
        self.bytes_done = 0.0
        self.queued: set[str] = set()
        self.files_done = self.files_total = 0
        self.current: str | None = None
        # Gone Markdown files by content hash, while a new file may turn out to be one of them renamed.
        self.gone_by_hash: dict[str, str] = {}
        self.renamed = 0

    def execute(self, files: list[tuple[str, Path]], gone: list[str]) -> IndexReport:
        self.cleared.update(gone)
        new = any(rel not in self.states for rel, _ in files)
        if new and not self.force:
            # Kept until every file is visited: a new file may be one of them renamed (its rows move).
            for rel in gone:
                if is_markdown(rel):
                    self.gone_by_hash.setdefault(self.states[rel].content_hash, rel)
        held = set(self.gone_by_hash.values())
        if gone and len(held) < len(gone):
            self.store.delete_files(self.spec.store_key, [rel for rel in gone if rel not in held])
        # With progress wanted, every file is stat'ed first to know the bytes to read; visit then uses
        # that stat, so nothing is stat'ed twice (two int64 arrays: 16 bytes a file, ~2 MB at 130k files).
        # A file changed after its stat is caught by the watcher, as one changed after the walk always was.
        sizes, mtimes = self.stat_all(files) if self.progress is not None else (None, None)
        if sizes is not None and mtimes is not None:
            self.bytes_total = sum(
                sizes[i] for i, (rel, _) in enumerate(files) if self.to_read(rel, sizes[i], mtimes[i])
            )
        self.files_total = len(files)
        for done, (rel, root) in enumerate(files):
            self.files_done, self.current = done, rel
            self.report(done, len(files), rel)
            if sizes is None or mtimes is None or sizes[done] < 0:
                self.visit(rel, root)
                continue
            size = sizes[done]
            self.visit(rel, root, (size, mtimes[done]))
            if rel not in self.queued and self.to_read(rel, size, mtimes[done]):
                self.bytes_done += size  # read, and done with at once (skipped, renamed, the same bytes)
        self.embed(flush_all=True)
        self.flush()
        self.record_problems()
        unmoved = list(self.gone_by_hash.values())
        if unmoved:  # gone for good: no new file had their bytes
            self.store.delete_files(self.spec.store_key, unmoved)
        if self.touched:
            self.store.update_stats_many(self.spec.store_key, self.touched)
        if gone or self.upserted or self.touched or self.renamed:
            self.store.maybe_optimize()
        self.report(len(files), len(files), None, force=True)
        problems = self.log.get(self.spec.store_key)
        unparsed = sum(1 for p in problems.values() if p["problem"] == "frontmatter")
        report: IndexReport = {
            "corpus": self.spec.name,
            "files_seen": len(files),
            "files_upserted": self.upserted,
            "files_touched": len(self.touched),
            # A renamed file's old path is not counted here: the file is in `renamed`.
            "files_deleted": len(gone) - self.renamed,
            "files_skipped": len(self.skipped),
            "renamed": self.renamed,
            "skipped": self.skipped,
            "frontmatter_errors": self.frontmatter_errors,
            # Every file of the corpus whose frontmatter does not parse now (this run's and earlier ones').
            "frontmatter_unparsed": unparsed,
            "chunks_written": self.chunks_written,
            "chunks_total": self.store.count_rows(self.spec.store_key),
            "forced": self.force,
            "seconds": round(time.perf_counter() - self.started, 3),
            "problems": [problems[path] for path in sorted(problems)],
        }
        if self.refused:
            report["refused"] = self.refused
            report["chunks_refused"] = sum(r["chunks_refused"] for r in self.refused)
        if unparsed and self.settings.fail_on_frontmatter_error:
            report["error"] = frontmatter_error(self.spec.name, unparsed)
        return report

    def report(self, done: int, total: int, rel: str | None, *, force: bool = False) -> None:
        if self.progress is None:
            return
        now = time.perf_counter()
        if force or now - self.last_progress >= PROGRESS_EVERY_SECS:
            self.last_progress = now
            event: ProgressEvent = {"corpus": self.spec.name, "done": done, "total": total, "path": rel}
            if self.bytes_total:
                event["bytes_done"] = min(int(self.bytes_done), self.bytes_total)
                event["bytes_total"] = self.bytes_total
                event["chunks_done"] = self.chunks_written
            self.progress(event)

    @staticmethod
    def stat_all(files: list[tuple[str, Path]]) -> tuple[array[int], array[int]]:
        """Each file's size and mtime; size -1 where the stat failed (visit stats again, saying why)."""
        sizes, mtimes = array("q"), array("q")
        for rel, root in files:
            try:
                # A string join: a Path per file cost more than the stat itself (~20 us, 130k files).
                st = os.stat(os.path.join(root, rel), follow_symlinks=False)
            except OSError:
                sizes.append(-1)
                mtimes.append(0)
            else:
                sizes.append(st.st_size)
                mtimes.append(st.st_mtime_ns)
        return sizes, mtimes

    def to_read(self, rel: str, size: int, mtime_ns: int) -> bool:
        """Whether visit reads the file: new, changed since its rows, or forced."""
        old = self.states.get(rel)
        return old is None or self.force or old.size != size or old.mtime_ns != mtime_ns

    def skip(self, rel: str, problem: FileProblemKind, reason: str) -> None:
        self.skipped.append({"path": rel, "reason": reason})
        if rel in self.states:
            reason += "; the rows of its last indexed version are kept"
        self.note(rel, problem, reason, indexed=False)

    def note(self, rel: str, problem: FileProblemKind, detail: str, *, indexed: bool) -> None:
        self.cleared.discard(rel)
        self.found[rel] = {
            "path": rel,
            "problem": problem,
            "detail": detail,
            "indexed": indexed,
            "found_ms": int(time.time() * 1000),
        }

    def read_clean(self, rel: str) -> None:
        self.found.pop(rel, None)
        self.cleared.add(rel)

    def record_problems(self) -> None:
        """Before the rows they describe are committed (see problems.py)."""
        if self.found or self.cleared:
            self.log.update(self.spec.store_key, self.found, self.cleared)
            self.found, self.cleared = {}, set()

    def visit(self, rel: str, root: Path, known: tuple[int, int] | None = None) -> None:
        """``known``: the file's size and mtime, when execute stat'ed it already."""
        if known is None:
            try:
                st = os.stat(os.path.join(root, rel), follow_symlinks=False)
            except OSError as exc:
                self.skip(rel, "unreadable", f"cannot stat: {exc.strerror or exc}")
                return
            known = (st.st_size, st.st_mtime_ns)
        size, mtime_ns = known
        old = self.states.get(rel)
        if old is not None and not self.force and old.size == size and old.mtime_ns == mtime_ns:
            return
        path = root / rel  # past the unchanged files' return: a Path per file cost more than their stat
        cap, key = size_cap(self.settings, rel)
        if size > cap:
            self.skip(rel, "too-large", _over_cap(key, cap, size))
            return
        try:
            # Through the sandbox, never following a link: a directory or the file itself swapped for a
            # symlink since the walk is refused, not read. The stat is the one the bytes were read under
            # (taken before reading: if the file changes meanwhile, the next run sees a new stat).
            data, st = read_file(root, rel, max_bytes=cap)
        except CallerError as exc:
            if isinstance(exc, TooLarge):
                self.skip(rel, "too-large", _over_cap(key, cap, None))
            else:
                self.skip(rel, "unreadable", f"cannot read: {exc.message}")
            return
        digest = hashlib.sha256(data).hexdigest()
        skipped_before = rel in self.recorded and not self.recorded[rel]["indexed"]
        if old is not None and old.content_hash == digest and not skipped_before and not self.force:
            # The same bytes as its rows: the same problem, if it had one (kept as recorded). Not so
            # after a skip: the file is back to its indexed bytes, and read again to learn how it is.
            self.touched[rel] = (st.st_size, st.st_mtime_ns)
            return
        if old is None and is_markdown(rel) and self.move(rel, path, digest, st.st_size, st.st_mtime_ns):
            return
        nul = data.find(b"\0") if not is_binary_format(rel) else -1
        if nul >= 0:  # git's test for a binary file; its text would be noise in every search
            self.skip(rel, "binary", f"binary content (a NUL byte at offset {nul}), not text")
            return
        try:
            page = chunk_file(rel, data, self.embedder.count_tokens, self.budget, self.limits)
        except UnicodeDecodeError as exc:
            self.skip(rel, "not-utf8", f"not valid UTF-8 (byte {exc.start})")
            return
        except OverBudget as exc:  # a zip that would decompress past max_decompressed_size
            self.skip(rel, "too-large", exc.reason)
            return
        except UnparseableFile as exc:
            self.skip(rel, "unparseable", exc.reason)
            return
        except Exception as exc:  # a chunker bug on one odd file must not stop the corpus
            self.skip(rel, "chunk-failed", f"cannot chunk: {type(exc).__name__}: {exc}")
            return
        chunks = list(page.chunks)
        try:
            keywords = file_keywords(rel, data, page) if chunks else []
        except Exception:  # keywords are a nicety: a bug there must not cost the file its rows
            keywords = []
        # Only Markdown has frontmatter.
        fields = page.fields if isinstance(page, MarkdownPage) else None
        problem = page.frontmatter_error if isinstance(page, MarkdownPage) else None
        cut = page.cut if isinstance(page, TextPage) else None
        if problem:  # indexed as text all the same; the caller is told
            self.frontmatter_errors.append({"path": rel, "reason": problem})
            self.note(rel, "frontmatter", problem, indexed=True)
        elif cut and chunks:  # a reader stopped at a limit: indexed as far as it got, and the reason kept
            self.note(rel, "cut", cut, indexed=True)
        elif chunks:
            self.read_clean(rel)
        pending = _Pending(
            rel,
            path,
            st.st_size,
            st.st_mtime_ns,
            digest,
            page.summary,
            keywords,
            chunks,
            json.dumps(fields, ensure_ascii=False, sort_keys=True) if fields else None,
        )
        if not pending.chunks:
            if cut:
                detail = f"no text to index before the reader stopped: {cut}"
            elif data.strip():
                detail = "no text to index (only frontmatter or markup)"
            else:
                detail = "only whitespace" if data else "an empty file"
            if old is not None:  # the file became blank: its old rows go
                self.note(rel, "empty", detail, indexed=False)
                self.complete(pending)
            else:
                self.skip(rel, "empty", detail)
            return
        self.queued.add(rel)
        self.queue.extend((pending, i) for i in range(len(pending.chunks)))
        self.embed(flush_all=False)

    def move(self, rel: str, path: Path, digest: str, size: int, mtime_ns: int) -> bool:
        """Give ``rel`` the rows of the gone Markdown file with its bytes, if there is one (a rename).

        Sound because a Markdown chunk's text, vector, summary, keywords, fields and quality come from
        the bytes alone (the chunker is never given the path); only the stored path and stat change.
        """
        source = self.gone_by_hash.pop(digest, None)
        if source is None:
            return False
        rows = self.store.file_writes(self.spec.store_key, source)
        if not rows:  # its rows went meanwhile: embed the file as new
            self.gone_by_hash[digest] = source
            return False
        for row in rows:
            row["abs_path"] = str(path)
            row["file_size"] = size
            row["file_mtime_ns"] = mtime_ns
        # Its problem (a frontmatter that does not parse) goes with its bytes.
        problem = self.recorded.get(source)
        if problem is not None and problem["indexed"]:
            if problem["problem"] == "frontmatter":
                self.frontmatter_errors.append({"path": rel, "reason": problem["detail"]})
            self.note(rel, problem["problem"], problem["detail"], indexed=True)
        else:
            self.read_clean(rel)
        # The old path's deletion and the new path's rows, side by side: one commit when in one group.
        self.ready[source] = []
        self.ready[rel] = rows
        self.ready_rows += len(rows)
        self.renamed += 1
        if self.ready_rows >= FLUSH_ROWS:
            self.flush()
        return True

    def embed(self, *, flush_all: bool) -> None:
        while len(self.queue) >= EMBED_WINDOW or (flush_all and self.queue):
            window, self.queue = self.queue[:EMBED_WINDOW], self.queue[EMBED_WINDOW:]
            window.sort(key=lambda item: len(item[0].chunks[item[1]].embed_text))
            for start in range(0, len(window), EMBED_BATCH):
                batch = window[start : start + EMBED_BATCH]
                refused: dict[int, str] = {}
                try:
                    vectors = self.embedder.embed_passages([p.chunks[i].embed_text for p, i in batch])
                except RefusedInputs as exc:  # the others are embedded: the file is indexed without these
                    vectors, refused = exc.vectors, exc.refused
                for k, ((pending, i), vector) in enumerate(zip(batch, vectors, strict=True)):
                    if k in refused:
                        pending.refused[i] = refused[k]
                    else:
                        pending.vectors[i] = vector
                    pending.filled += 1
                    self.bytes_done += pending.size / len(pending.chunks)
                    if pending.complete:
                        self.complete(pending)
                # Embedding is where the time goes: progress between files too (rate-limited by report).
                self.report(self.files_done, self.files_total, self.current)

    def complete(self, pending: _Pending) -> None:
        if pending.refused and not self.refused_chunks(pending):
            return
        rows = pending.rows()
        self.ready[pending.rel] = rows
        self.ready_rows += len(rows)
        self.upserted += 1
        self.chunks_written += len(rows)
        if self.ready_rows >= FLUSH_ROWS:
            self.flush()

    def refused_chunks(self, pending: _Pending) -> bool:
        """Count and record the chunks of ``pending`` the embedder refused; False when it refused them
        all (the file is then skipped, keeping the rows of its last indexed version)."""
        count, total = len(pending.refused), len(pending.chunks)
        reason = pending.refused[min(pending.refused)]
        self.refused.append({"path": pending.rel, "chunks_refused": count, "chunks": total, "reason": reason})
        what = f"the embedding endpoint refused {count} of its {total} chunk(s) ({reason})"
        if count == total:
            self.skip(pending.rel, "refused", what)
            return False
        self.note(pending.rel, "refused", f"{what}; indexed without them", indexed=True)
        return True

    def flush(self) -> None:
        if self.ready:
            self.record_problems()
            self.store.replace_files(self.spec.store_key, self.ready)
            self.ready, self.ready_rows = {}, 0

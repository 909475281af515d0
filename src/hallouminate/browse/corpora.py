"""``list_corpora``: every effective corpus for the request's cwd."""

from __future__ import annotations

from hallouminate.config import CorpusSpec, Resolved
from hallouminate.protocol.results import CorpusEntry, ListCorporaResult


def corpus_entry(spec: CorpusSpec) -> CorpusEntry:
    return {
        "name": spec.name,
        "kind": spec.kind,
        "paths": [str(root) for root in spec.roots],
        "globs": list(spec.globs),
        "exclude": list(spec.exclude),
        "repository": spec.repository,
    }


def list_corpora(resolved: Resolved) -> ListCorporaResult:
    """``{corpora: [{name, kind, paths, globs, exclude, repository}], default_corpus, repository, warnings}``.

    Corpora come in configuration order (baseline first, then the repo layer, then discovered
    repositories). ``default_corpus`` is what the read tools use when no corpus is passed (null outside
    every repository); ``warnings`` says why a discovered repository is missing, if one is.
    """
    return {
        "corpora": [corpus_entry(spec) for spec in resolved.corpora.values()],
        "default_corpus": resolved.default_corpus,
        "repository": resolved.repository_name,
        "warnings": list(resolved.warnings),
    }

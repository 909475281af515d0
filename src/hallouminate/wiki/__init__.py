"""Wiki writes: ``add_markdown`` and ``delete_markdown``, atomic and sandboxed, with ``index.md`` link lists
and advisory lint. Engine code (the shim and the CLI never import it); no store or model here: the daemon
re-indexes the paths a write returns. See docs/wiki-writes.md and docs/adr/0010-atomic-wiki-writes.md.

Modules: ``paths`` (which paths a write may touch), ``atomic`` (descriptor-relative create, replace and
remove), ``journal`` (temp names and the sweep after a crash), ``edits`` (section edits), ``index_lists``
(``index.md`` link lists), ``lint``, ``writes`` (the two operations). Nothing is imported here, so the
daemon can sweep temp files at start-up (``journal``) without loading the Markdown stack.
"""

"""Wiki writes: ``add_markdown``, ``delete_markdown`` and ``move_markdown``, atomic and sandboxed, with
``index.md`` link lists and advisory lint. Engine code (the shim and the CLI never import it); no store or
model here: the daemon re-indexes the paths a write returns. See docs/wiki-writes.md and
docs/adr/0010-atomic-wiki-writes.md.

Modules: ``paths`` (which paths a write may touch), ``atomic`` (descriptor-relative create, replace and
remove), ``journal`` (temp names and the sweep after a crash), ``edits`` (section edits), ``index_lists``
(``index.md`` link lists), ``lint``, ``writes`` (add and delete), ``move`` (a move), ``relink`` (the
links a move rewrites), ``redo`` (a multi-file write's redo log, finished at start-up after a crash).
Nothing is imported here, so the daemon can sweep temp files and finish a move at start-up (``journal``,
``redo``) without loading the Markdown stack.
"""

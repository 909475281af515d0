"""Default values of every setting.

``MODEL_NAME`` repeats ``hallouminate.model.MODEL_NAME`` on purpose: importing the model package here would
drag its heavy dependencies into light callers (``init-repo``, ``config``). A test keeps the two equal.
"""

from __future__ import annotations

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
IDLE_EXIT_SECS = 900.0
# The [search] settings' defaults live with their bounds: hallouminate.protocol.limits (TOP_FILES.default...).
# The most tokens the model sees for one chunk, breadcrumb and [CLS]/[SEP] included. MiniLM reads 256
# (anything longer would be silently truncated, so the indexer also clamps to the model's maximum) but was
# fine-tuned on 128-token texts: 128-token chunks rank better (docs/adr/0012-ranking.md).
CHUNK_TOKENS = 128
# [indexing] size caps of a file the indexer reads: text (Markdown, text, JSON, CSV, HTML, code; formerly
# max_file_bytes) and binary documents (PDF, Office, OpenDocument: protocol.limits
# DOCUMENT_BINARY_MAX_BYTES, the largest a read returns).
MAX_TEXT_FILE_SIZE = 4 * 1024 * 1024
MAX_BINARY_FILE_SIZE = 50 * 1024 * 1024
# The decompression budget of a zip-based document (docx, pptx, xlsx, ods); repeats
# indexing.documents.MAX_DECOMPRESSED_SIZE (config sits below indexing; a test keeps the two equal).
MAX_DECOMPRESSED_SIZE = 50 * 1024 * 1024
FAIL_ON_FRONTMATTER_ERROR = False
CORPUS_GLOBS = ("**/*.md",)
# What a knowledge base served by `serve --kb-path DIR` holds, unless [knowledge_base] globs says more
# (GrooveSeek's default too: Markdown, other formats once enabled).
KB_GLOBS = ("**/*.md", "**/*.markdown")
WIKI_DIR = ".hallouminate/wiki"
REPO_CONFIG = ".hallouminate/config.toml"
# Discovery of repositories below a cwd that is above all of them: how deep, and at most how many
# directories to look at (a cwd of / or ~ must stay cheap: discovery runs on every such request).
DISCOVERY_MAX_DEPTH = 4
DISCOVERY_MAX_DIRS = 20_000
# [embeddings] provider: "local" runs MODEL_NAME (or [embeddings] model) in the daemon; "openai-compatible"
# calls an HTTP embedding endpoint (docs/model.md, "An OpenAI-compatible endpoint").
EMBEDDING_PROVIDER = "local"
EMBEDDING_PROVIDERS = ("local", "openai-compatible")
# The endpoint client's defaults: inputs per request (OpenAI accepts up to 2048), seconds per request,
# the most tokens the endpoint reads of one input (512: what small embedding servers accept), and the
# attempts after the first on a 429, a 5xx or a dropped connection.
ENDPOINT_BATCH_SIZE = 64
ENDPOINT_TIMEOUT_SECS = 60.0
ENDPOINT_MAX_INPUT_TOKENS = 512
ENDPOINT_MAX_RETRIES = 5
# [store]: where the index lives. A local directory (path, default xdg.default_store_dir()) or a team's
# object store (uri, s3://bucket/prefix: one writer daemon, any number of read-only ones;
# docs/configuration.md).
STORE_URI_SCHEMES = ("s3",)
STORE_MODES = ("read-write", "read-only")
STORE_MODE = "read-write"
# The section of [store] credentials_file (an AWS-style shared credentials/config INI file).
STORE_PROFILE = "default"
# How often a read-only daemon checks the writer's table version, and the writer's lease expiry (renewed
# at a third of it), in seconds, with the bounds a config may set.
STORE_POLL_INTERVAL_SECS = 3.0
STORE_POLL_INTERVAL_BOUNDS = (0.2, 3600.0)
STORE_LEASE_SECS = 30.0
STORE_LEASE_BOUNDS = (5.0, 3600.0)

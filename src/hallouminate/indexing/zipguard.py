"""Check a zip container (docx, pptx, xlsx, ods) before any library opens it: the decompression budget.

Python's ``zipfile`` never inflates a member past the size its header declares (it stops there and
fails the CRC check), so the sum of the declared sizes bounds what a reader can be made to decompress,
whatever the compressed bytes claim. A zip bomb declares its size honestly or is cut at the lie; either
way the sum is what we budget.
"""

from __future__ import annotations

import io
import zipfile

from hallouminate.indexing.text_chunker import UnparseableFile

# More members than any real Office document has; a container of millions of empty members is a bomb of
# another kind (each costs a directory entry in memory).
MAX_MEMBERS = 10_000


class OverBudget(UnparseableFile):
    """The container would decompress past ``max_decompressed_size``: skipped as too large."""


def open_zip(data: bytes, budget: int, *, kind: str) -> zipfile.ZipFile:
    """``data`` opened as a zip, after checking it fits ``budget`` bytes decompressed.

    ``kind`` names the format in reasons ("a .docx file"). Raises ``UnparseableFile`` for bytes that are
    not a zip (a truncated file, a PDF renamed .xlsx) and ``OverBudget`` past the budget.
    """
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise UnparseableFile(f"not a valid {kind} (not a readable zip container: {exc})") from None
    if len(members) > MAX_MEMBERS:
        raise OverBudget(f"{kind} with {len(members)} zip members (more than {MAX_MEMBERS}): not indexed")
    total = sum(member.file_size for member in members)
    if total > budget:
        raise OverBudget(
            f"{kind} decompresses to {total} bytes, more than max_decompressed_size ({budget});"
            " raise [indexing] max_decompressed_size to index it"
        )
    return archive

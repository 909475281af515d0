"""Chunk quality (pure): GrooveSeek's rule read on a chunk's body, with boilerplate any wiki carries.

Start at 1.0; under 30 characters -0.6; boilerplate -0.5; one line under 80 characters -0.3; clamp 0..1.
"""

from __future__ import annotations

import pytest

from hallouminate.indexing import chunk_markdown
from hallouminate.indexing.quality import chunk_quality

PROSE = (
    "The primary fails over to the standby when three health checks in a row miss; Patroni promotes\n"
    "the replica with the least lag and the old primary rejoins as a replica once it is back."
)


def score(text: str, heading_path: list[str] | None = None) -> float:
    return chunk_quality(text, heading_path).score


# -- the three penalties, one by one and together -----------------------------------------------------
def test_prose_of_several_lines_scores_full() -> None:
    assert chunk_quality(PROSE) == chunk_quality(PROSE)  # deterministic
    assert chunk_quality(PROSE).score == 1.0 and chunk_quality(PROSE).reasons == ()


def test_one_line_under_80_characters_loses_0_3() -> None:
    line = "Backups run nightly at 02:00 UTC and are kept for 35 days."  # 58 characters
    assert chunk_quality(line).score == 0.7 and chunk_quality(line).reasons == ("one-line",)


def test_one_line_of_80_characters_or_more_keeps_full_score() -> None:
    line = "Backups run nightly at 02:00 UTC, are kept for 35 days and are verified every Sunday."
    assert len(line) >= 80 and score(line) == 1.0


def test_under_30_characters_on_one_line_is_dropped_by_the_default_threshold() -> None:
    quality = chunk_quality("Restart the daemon.")
    assert quality.reasons == ("short", "one-line") and quality.score == 0.1 < 0.3


def test_under_30_characters_over_two_lines_loses_only_0_6() -> None:
    assert score("- port 8080\n- host db1") == 0.4


def test_scores_are_exact_decimals_in_0_to_1() -> None:
    # Short, boilerplate and one line: -1.4 clamps to 0.
    assert score("[Home](index.md)") == 0.0
    assert {score(t) for t in ("x", PROSE, "[a](a.md)\n[b](b.md)", "Restart it now, please.")} <= {
        0.0,
        0.1,
        0.2,
        0.4,
        0.5,
        0.7,
        1.0,
    }


# -- what is measured: length and lines on the whole chunk, heading line included (as GrooveSeek) ---------
def test_a_short_fact_under_its_heading_is_kept_by_the_default_threshold() -> None:
    line = "Backups run nightly at 02:00 UTC and are kept for 35 days."
    assert score(line) == 0.7  # a line on its own: a fragment cut from a longer section
    assert score(f"## Schedule\n\n{line}", ["Backups", "Schedule"]) == 1.0
    assert score(f"Schedule\n--------\n\n{line}") == 1.0  # a setext heading too
    owner = chunk_quality("## Owner\n\n@alice", ["Service", "Owner"])
    assert owner.reasons == ("short",) and owner.score == 0.4 >= 0.3


def test_a_page_of_one_short_chunk_is_the_whole_page_and_is_never_short() -> None:
    assert score("Restart the daemon.") == 0.1  # a fragment of a longer page: dropped by default
    whole = chunk_quality("Restart the daemon.", whole_page=True)
    assert whole.score == 1.0 and whole.reasons == ()
    # Boilerplate is still boilerplate on a one-chunk page.
    assert chunk_quality("[Home](index.md)", whole_page=True).reasons == ("links-only",)


def test_a_chunk_of_only_headings_scores_zero() -> None:
    quality = chunk_quality("## Appendix\n\n### Notes", ["Page", "Appendix"])
    assert quality.score == 0.0 and "no-text" in quality.reasons


def test_a_chunk_of_only_markup_scores_zero() -> None:
    for markup in ("<!-- INDEX-END -->", "---\n\n<br/>", "![](diagram.png)"):
        quality = chunk_quality(markup)
        assert quality.score == 0.0 and "no-text" in quality.reasons, markup


def test_an_image_is_its_alt_text() -> None:
    described = "![The shim talks to the daemon over a Unix socket, the daemon to LanceDB](arch.png)"
    assert score(described) == 1.0


def test_a_hash_line_inside_a_code_fence_is_code_not_a_heading() -> None:
    code = "```sh\n# restore one table\npgbackrest restore --type=time --target='2024-01-01'\n```"
    assert score(code) == 1.0


# -- boilerplate: links only ------------------------------------------------------------------------------
def test_a_list_of_links_is_boilerplate() -> None:
    text = (
        "## See also\n\n- [Failover](failover.md)\n- [Backups](backups.md)\n- [Replication](replication.md)"
    )
    quality = chunk_quality(text, ["Database", "See also"])
    assert quality.reasons == ("links-only",) and quality.score == 0.5


def test_navigation_and_breadcrumb_trails_are_boilerplate() -> None:
    assert "links-only" in chunk_quality("[← Previous](a.md) | [Next →](c.md)\n[Back to top](#top)").reasons
    assert (
        "links-only" in chunk_quality("[Home](/) > [Runbooks](/runbooks) > [Database](/runbooks/db)").reasons
    )


def test_a_table_of_contents_of_anchor_links_is_boilerplate() -> None:
    toc = "- [Install](#install)\n- [Configure](#configure)\n  - [Ports](#ports)\n- [Upgrade](#upgrade)"
    assert chunk_quality(toc).reasons == ("links-only",)


def test_badges_wikilinks_autolinks_and_reference_definitions_are_links() -> None:
    badges = "[![build](https://ci/badge.svg)](https://ci) [![cov](https://cov/b.svg)](https://cov)"
    assert "links-only" in chunk_quality(badges).reasons
    assert "links-only" in chunk_quality("[[Failover]]\n[[Backups]]\n<https://wiki.example/db>").reasons
    assert "links-only" in chunk_quality("[pg]: https://postgresql.org\n[pb]: https://pgbackrest.org").reasons


def test_a_few_words_beside_the_links_do_not_make_content() -> None:
    assert "links-only" in chunk_quality("See also: [Failover](f.md)\nNext: [Backups](b.md)").reasons


def test_links_with_descriptions_are_content() -> None:
    text = (
        "- [Failover](failover.md): what to do when the primary database stops answering\n"
        "- [Backups](backups.md): where the nightly backups live and how to restore one table"
    )
    assert score(text) == 1.0


def test_a_sentence_holding_a_link_is_content() -> None:
    text = "Restore a single table with [pgBackRest](https://pgbackrest.org) into a scratch\ndatabase first."
    assert score(text) == 1.0


def test_a_url_in_code_is_code() -> None:
    assert (
        score("```\ncurl -sf https://status.internal/health\ncurl -sf https://status.internal/ready\n```")
        == 1.0
    )


def test_prose_beside_a_link_list_keeps_the_chunk_content() -> None:
    text = f"{PROSE}\n\n- [Failover](failover.md)\n- [Backups](backups.md)"
    assert score(text) == 1.0


# -- boilerplate: licence and copyright -----------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "Copyright (c) 2024 Acme Corp.\nAll rights reserved.",
        "© 2019-2024 Acme Corp. Released under the MIT licence,\nsee the LICENSE file in the repository root.",
        "SPDX-License-Identifier: Apache-2.0\nSPDX-FileCopyrightText: 2024 Acme Corp",
        "This work is licensed under a Creative Commons Attribution 4.0 International License.\n"
        "To view a copy of this license, visit the Creative Commons website.",
        "Text is available under CC BY-SA 4.0; additional terms may apply.\nSee the terms of use.",
        "This program is free software: you can redistribute it and/or modify it under the terms of\n"
        "the GNU General Public License as published by the Free Software Foundation.",
        "Permission is hereby granted, free of charge, to any person obtaining a copy of this software\n"
        "and associated documentation files, to deal in the Software without restriction.\n\n"
        'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED.',
        'Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except\n'
        "in compliance with the License. Unless required by applicable law or agreed to in writing, ...",
    ],
)
def test_licence_and_copyright_blocks_are_boilerplate(text: str) -> None:
    quality = chunk_quality(f"## License\n\n{text}", ["Project", "License"])
    assert "licence" in quality.reasons and quality.score <= 0.5


def test_a_licence_footer_on_one_line_is_dropped_by_the_default_threshold() -> None:
    assert score("Copyright © 2024 Acme Corp. All rights reserved.") == 0.2


def test_a_licence_line_with_a_link_is_still_a_licence_block() -> None:
    assert "licence" in chunk_quality("MIT © Acme Corp\n[LICENSE](LICENSE)").reasons


def test_prose_about_licensing_is_content() -> None:
    text = (
        "We may vendor a dependency only when its licence allows redistribution; the legal team keeps\n"
        "the list of approved licences and answers questions in the #legal channel within a day."
    )
    assert score(text, ["Dependencies", "Licences"]) == 1.0


def test_licence_words_quoted_or_in_code_are_a_mention_not_a_licence() -> None:
    text = (
        '- **licence**: a paragraph holding a copyright line or `©`, "all\n'
        '  rights reserved", or an `SPDX-License-Identifier` tag'
    )
    assert "licence" not in chunk_quality(text).reasons
    assert "licence" in chunk_quality("All\n  rights reserved.").reasons  # a statement, wrapped


def test_naming_a_licence_in_prose_is_content() -> None:
    text = (
        "Pages may quote Creative Commons material; code under the GNU General Public License is not\n"
        "vendored, and the legal team answers licence questions in the #legal channel."
    )
    assert score(text) == 1.0


def test_a_page_whose_prose_ends_in_a_copyright_line_keeps_its_content() -> None:
    assert score(f"{PROSE}\n\nCopyright (c) 2024 Acme Corp.") == 1.0


# -- boilerplate: a table of contents without links ----------------------------------------------------
def test_a_contents_section_that_is_only_a_list_is_boilerplate() -> None:
    toc = "1. Installing the agent\n2. Configuring the ports\n3. Upgrading between major versions\n4. Removing it"
    assert chunk_quality(toc, ["Agent", "Contents"]).reasons == ("contents",)
    assert chunk_quality(toc, ["Agent", "On this page:"]).reasons == ("contents",)
    # The same list under another heading is content (steps, say).
    assert score(toc, ["Agent", "Lifecycle"]) == 1.0


def test_a_contents_section_with_prose_is_content() -> None:
    assert score(PROSE, ["Agent", "Contents"]) == 1.0


# -- on chunks as the chunker cuts them -------------------------------------------------------------------
def test_a_page_scores_its_prose_high_and_its_link_and_licence_sections_low() -> None:
    page = chunk_markdown(
        "# Database failover\n\n"
        f"{PROSE}\n\n"
        "## See also\n\n- [Backups](backups.md)\n- [Replication](replication.md)\n\n"
        "## License\n\nCopyright (c) 2024 Acme Corp. All rights reserved.\n",
        lambda text: len(text.split()),
        200,
    )
    scores = {chunk.heading_path[-1]: score(chunk.text, chunk.heading_path) for chunk in page.chunks}
    # The licence line sits under its heading: two lines, so boilerplate alone (0.5).
    assert scores == {"Database failover": 1.0, "See also": 0.5, "License": 0.5}

"""wiki/relink.py on its own (pure text in, text out): each link form a move rewrites, each it must leave
alone, and the moved page's own links re-aimed from its new directory."""

from __future__ import annotations

import pytest

from hallouminate.wiki.relink import Move, relink

PAGES = {"guides/my setup.md", "guides/other.md", "index.md", "a/deploy.md", "b/deploy.md", "img/x.png"}
MOVE = Move.of("guides/my setup.md", "howto/install (v2).md", PAGES)


@pytest.mark.parametrize(
    ("page", "before", "after"),
    [
        ("index.md", "[s](guides/my%20setup.md#a-b)", "[s](howto/install%20%28v2%29.md#a-b)"),
        ("index.md", "[s](<guides/my setup.md>)", "[s](<howto/install (v2).md>)"),
        ("index.md", "[s](guides/my%20setup.md?x=1#y)", "[s](howto/install%20%28v2%29.md?x=1#y)"),
        ("guides/other.md", "[s](./my%20setup.md)", "[s](../howto/install%20%28v2%29.md)"),
        ("guides/other.md", "[[my setup#Top|alias]]", "[[install (v2)#Top|alias]]"),
        ("index.md", "[r]: <guides/my setup.md> 'title'", "[r]: <howto/install (v2).md> 'title'"),
        # Left alone: other pages, external and absolute links, code, an anchor of the page itself.
        (
            "index.md",
            "[o](guides/other.md) [w](https://x.y/guides/my%20setup.md) [a](/guides/my%20setup.md)",
            None,
        ),
        ("index.md", "`[s](guides/my%20setup.md)` and `[[my setup]]`", None),
        ("index.md", "[top](#my-setup)", None),
    ],
)
def test_links_to_the_moved_page_are_rewritten_in_their_own_style(
    page: str, before: str, after: str | None
) -> None:
    out = relink(f"# T\n\n{before}\n", page, MOVE)
    assert out.text == f"# T\n\n{after if after is not None else before}\n"
    assert out.links == (0 if after is None else 1)


def test_the_moved_page_keeps_reaching_what_it_reached() -> None:
    text = (
        "![x](../img/x.png) [o](other.md#h) [up](../../README.md) [d](../a/) [self](my%20setup.md) [h](#h)\n"
    )
    out = relink(text, "guides/my setup.md", MOVE)
    assert out.text == (
        "![x](../img/x.png) [o](../guides/other.md#h) [up](../../README.md) [d](../a/) "
        "[self](install%20%28v2%29.md) [h](#h)\n"
    )


def test_a_fenced_block_front_matter_and_html_are_not_prose() -> None:
    text = '---\nsee: "[[my setup]]"\n---\n\n```\n[[my setup]]\n```\n\n<div>\n[[my setup]]\n</div>\n\n[[my setup]]\n'
    out = relink(text, "index.md", MOVE)
    assert out.links == 1 and out.text.endswith("[[install (v2)]]\n")
    assert out.text.count("[[my setup]]") == 3


def test_a_stem_naming_several_pages_is_left_and_reported() -> None:
    move = Move.of("a/deploy.md", "c/ship.md", PAGES)
    out = relink("[[deploy]] [[a/deploy|A]]\n", "index.md", move)
    assert out.text == "[[deploy]] [[c/ship|A]]\n"
    assert out.ambiguous == [(1, "[[deploy]]")]


def test_a_new_stem_another_page_has_becomes_the_path() -> None:
    move = Move.of("guides/other.md", "x/deploy.md", PAGES)
    out = relink("[[other]]\n", "index.md", move)
    assert out.text == "[[x/deploy]]\n"  # [[deploy]] would name three pages


def test_a_link_still_naming_the_moved_page_is_left_as_written() -> None:
    # Same stem in another directory: [[other]] and [[other.md]] still resolve to it; the path does not.
    move = Move.of("guides/other.md", "archive/other.md", PAGES)
    out = relink("[[other]] [[other.md]] [[guides/other]]\n", "index.md", move)
    assert out.text == "[[other]] [[other.md]] [[archive/other]]\n" and out.links == 1

"""HTML pages for the reader's tests: a small real-looking page and the hostile shapes (generated, never
committed)."""

from __future__ import annotations

PHRASE = "the amber fog horn sounds twice"

ARTICLE = f"""<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Harbour Handbook</title>
  <style>body {{ font-family: serif }} .secret {{ color: red }}</style>
  <script>var tracking = "script words never indexed";</script>
</head>
<body>
  <header><a href="/">Harbour Authority</a><nav><ul><li><a href="/a">Menu entry</a></li></ul></nav></header>
  <aside>Sidebar advert</aside>
  <main>
    <h1>Night Operations</h1>
    <p>Every vessel entering after dusk reports to the <b>harbour master</b> by radio.</p>
    <h2>Fog Signals</h2>
    <p>When visibility drops below one mile, {PHRASE} a minute.</p>
    <p>Keepers log each signal &amp; its time.</p>
    <h2>Berth Table</h2>
    <table>
      <tr><th>Berth</th><th>Depth</th></tr>
      <tr><td>North quay</td><td>12 m</td></tr>
      <tr><td>South quay</td><td>9 m</td></tr>
    </table>
    <h3>Checklist</h3>
    <ul><li>Lights on</li><li>Radio on channel 16</li></ul>
    <pre>horn --pattern long,long
     --every 60s</pre>
  </main>
  <footer>Copyright Harbour Authority</footer>
</body>
</html>
"""


def deep_divs(depth: int) -> str:
    """``depth`` nested ``<div>``s around one sentence, closed again, then a paragraph after them."""
    return (
        "<html><body>" + "<div>" * depth + "deep inner sentence" + "</div>" * depth
        + "<p>after the nest</p></body></html>"
    )  # fmt: skip


def unclosed_bold(count: int) -> str:
    """``count`` ``<b>`` start tags never closed, then text."""
    return "<html><body>" + "<b>" * count + "bold to the end</body></html>"


def giant_text(chars: int) -> str:
    """One paragraph holding a single text node of about ``chars`` characters (words, no markup)."""
    words = "lorem ipsum dolor sit amet " * (chars // 27 + 1)
    return f"<html><body><p>{words[:chars]}</p></body></html>"


def tiny_elements(count: int) -> str:
    """``count`` tiny paragraphs, each a one-word element."""
    return "<html><body>" + "".join(f"<p><span>w{i}</span></p>" for i in range(count)) + "</body></html>"

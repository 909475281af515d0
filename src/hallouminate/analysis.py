"""The one text analyser: how search reads words, everywhere (ADR 0019).

BM25 indexes chunk text with it and looks up the tokens it gives a query (``storage/lexical.py``); the
literal gate (``search/literal.py``), snippets (``search/snippet.py``) and page keywords
(``indexing/keywords.py``) find the same tokens. So a word matches in all of them or in none: "running
jobs" and "how to run the job" share ``run`` and ``job`` in each.

The analyser is tantivy's: its simple tokenizer (splits on anything not alphanumeric, so ``_`` splits
too), tokens of ``MAX_TOKEN_BYTES`` or more dropped, lower case, ASCII folding, the English Snowball
stemmer (Porter2). It imports nothing of ours; tantivy is loaded on first use (and wordfreq, for
``english_zipf``, on its first call). Stop words are a query's
business, not the text's: ``STOP_WORDS`` are dropped from what a query looks for (``query_terms``) and from
keywords (``content_tokens``), never from the index, so BM25's document lengths count every word a chunk
holds (measured: every BM25-alone figure of the labelled sets equal or better than with them dropped from
the index too, the fused ranking identical; ADR 0019).

Analysing a whole chunk costs ~40 us, too much for the gate, which asks of up to 100 candidate rows per
query whether each holds each query token. ``TokenFinder`` answers exactly what analysing would, faster.
It reduces a text to its ASCII words, lower-cased, between spaces (one bytes.translate); a word holding
a letter outside ASCII ("café") is analysed alone instead (cached). It looks for each token with ``in``
at a word start, and analyses only the words found there, one at a time (cached: a corpus has a bounded
vocabulary). What it looks for rests on how Porter2 rewrites words: only at their end, and the token's
last letter differs from the word's only where the stemmer wrote it, so every word begins with one of
``starts(token)``: the token, or the token with another letter last ("hoping" -> "hope", "happy" ->
"happi", "skies" -> "sky", "capability" -> "capabl"; "dying" -> "die" changes two). ADR 0019 gives the
argument; ``tests/test_analysis.py`` checks it over a dictionary, and that the finder answers what the
analyser does on every text its property tests draw.

Chinese and Japanese are written without spaces: tantivy's simple tokenizer would make one token of a whole
run of Han, Hiragana and Katakana (a clause, or a sentence; dropped when it reaches ``MAX_TOKEN_BYTES``), so
no keyword inside it could match. Such a run is read as its overlapping character bigrams ("数据库备份" ->
数据 据库 库备 备份; one character alone stays a unigram), as Lucene's CJK analyser does: no dictionary,
no model, the same on every text, and a word of two or more characters is always a run of bigrams, so a
query's word is found as a phrase of them (ADR 0053). ``cjk_spaced`` writes the bigrams out between
spaces before tantivy sees a text, on both sides: the lexical index is given ``cjk_spaced(text)`` and
every function here analyses through it, so index, gate, snippets and keywords agree. A text with no such
run is passed through untouched (one regex search).
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tantivy

# Dropped from queries (and keywords), so "how do I ..." questions are ranked by what they ask: the
# function words of English questions and prose. A query of these alone is recognised (vector-only).
_STOP_WORD_TEXT = """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can cannot could did do does doing don down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself just me
    more most my myself no nor not now of off on once only or other ought our ours ourselves out over own
    same she should so some such than that the their theirs them themselves then there these they this
    those through to too under until up very was we were what when where which while who whom why will
    with would you your yours yourself yourselves s t
"""
STOP_WORDS = frozenset(_STOP_WORD_TEXT.split())
# Tokens this long or longer (in UTF-8 bytes) are dropped: hashes, base64, minified code.
MAX_TOKEN_BYTES = 40
# Words whose token is remembered (``word_token``); the cache starts over when full.
WORD_CACHE_SIZE = 1 << 16
# Particles that close up with the verb before them into a compound noun ("set up" -> "setup"), and how
# many words before one that verb may stand ("set this up", "roll the deploy back").
PARTICLES = frozenset(["up", "down", "out", "off", "over", "back", "in", "on", "through", "around", "away"])
PARTICLE_REACH = 3

# ASCII as bytes with only its words left: letters lower-cased, digits kept, anything else a space (so is
# "?", which stands for each character outside ASCII once a text is encoded with errors="replace").
_WORDS_ONLY = bytes(
    c + 32 if 65 <= c <= 90 else c if 48 <= c <= 57 or 97 <= c <= 122 else 32 for c in range(256)
)
# Characters outside ASCII that tantivy never counts as alphanumeric (tests/test_analysis.py checks each):
# spaces, and the punctuation, symbols and arrows of typographic prose (’ “ ” — … • → ×).
_SEPARATOR_RANGES = (
    (0x85, 0x85), (0xA0, 0xA9), (0xAB, 0xB1), (0xB4, 0xB4), (0xB6, 0xB8), (0xBB, 0xBB), (0xBF, 0xBF),
    (0xD7, 0xD7), (0xF7, 0xF7), (0x1680, 0x1680), (0x2000, 0x200A), (0x2010, 0x2029), (0x202F, 0x205F),
    (0x20A0, 0x20C0), (0x2190, 0x22FF), (0x2500, 0x257F), (0x25A0, 0x25FF), (0x3000, 0x3000),
)  # fmt: skip
SEPARATORS_OUTSIDE_ASCII = frozenset(chr(c) for low, high in _SEPARATOR_RANGES for c in range(low, high + 1))
_RANGES = "".join(f"\\u{low:04x}-\\u{high:04x}" for low, high in _SEPARATOR_RANGES)
# A character outside ASCII that may be part of a word (a letter, a digit, a mark, ...), and the rest of a
# word from one.
_IN_WORD_OUTSIDE_ASCII = re.compile(f"[^\\x00-\\x7f{_RANGES}]")
_WORD_CHARS = f"[^\\x00-/:-@\\[-`{{-\\x7f{_RANGES}]"
_WORD_REST = re.compile(f"{_WORD_CHARS}*")
_WORD_HEAD = re.compile(f"{_WORD_CHARS}*\\Z")  # the part of a word up to a given offset
# A text with more words holding letters outside ASCII than this is analysed whole (cheaper then).
MAX_SHADOWED = 16

# The scripts written without spaces between words, read as character bigrams: Han (CJK ideographs, their
# extensions and compatibility forms, the iteration and closing marks 々 〆 〇), Hiragana, Katakana (with
# its phonetic extensions and half-width forms; the prolonged sound mark ー is in its block). Hangul is
# written with spaces and stays with the simple tokenizer.
_CJK_CHARS = (
    "\\u3005-\\u3007\\u3040-\\u309f\\u30a0-\\u30ff\\u31f0-\\u31ff\\u3400-\\u4dbf\\u4e00-\\u9fff"
    "\\uf900-\\ufaff\\uff66-\\uff9f\\U00020000-\\U0003134f"
)
_CJK_RUN = re.compile(f"[{_CJK_CHARS}]+")
_CJK_ANY = re.compile(f"[{_CJK_CHARS}]")


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds a character of a script written without spaces (Han, Hiragana, Katakana)."""
    return not text.isascii() and _CJK_ANY.search(text) is not None


def _bigrams(run: str) -> list[str]:
    return [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]


def cjk_spaced(text: str) -> str:
    """``text`` with every run of Han, Hiragana and Katakana replaced by its bigrams between spaces: what
    tantivy's analyser is given, so its tokens are this module's (the lexical index calls it on each
    chunk). A text without such a run comes back as it is."""
    if not has_cjk(text):
        return text
    return _CJK_RUN.sub(lambda run: " " + " ".join(_bigrams(run.group())) + " ", text)


def _spaced_map(text: str) -> tuple[str, list[int]]:
    """``cjk_spaced(text)`` and, for each of its characters, where it came from in ``text`` (a bigram's
    characters point at theirs; an added space at the character after it)."""
    pieces: list[str] = []
    origin: list[int] = []
    last = 0
    for run in _CJK_RUN.finditer(text):
        pieces.append(text[last : run.start()] + " ")
        origin.extend(range(last, run.start() + 1))
        for i, gram in enumerate(_bigrams(run.group())):
            pieces.append(gram + " ")
            at = run.start() + i
            origin.extend([*range(at, at + len(gram)), at + len(gram)])
        last = run.end()
    pieces.append(text[last:])
    origin.extend(range(last, len(text) + 1))
    return "".join(pieces), origin


def _offset_tokens(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, token)`` of every token of ``text``, as character offsets in ``text`` (a bigram's are
    its two characters)."""
    if not has_cjk(text):
        return [(t.char_offset_from, t.char_offset_to, t.text) for t in analyzer().pre_tokenize(text).tokens]
    spaced, origin = _spaced_map(text)
    return [
        (origin[t.char_offset_from], origin[t.char_offset_to - 1] + 1, t.text)
        for t in analyzer().pre_tokenize(spaced).tokens
    ]


def _words_builder() -> tantivy.TextAnalyzerBuilder:
    """The analyser up to its stemmer: words split, too long ones dropped, lower-cased, ASCII-folded."""
    import tantivy

    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(MAX_TOKEN_BYTES))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.ascii_fold())
    )


def build_analyzer() -> tantivy.TextAnalyzer:
    """A new instance of the analyser (the lexical index registers one of its own)."""
    import tantivy

    return _words_builder().filter(tantivy.Filter.stemmer("english")).build()


@functools.cache
def analyzer() -> tantivy.TextAnalyzer:
    """The analyser, built once per process."""
    return build_analyzer()


def analyze(text: str) -> list[str]:
    """Every token of ``text``, in order (repeats kept)."""
    return analyzer().analyze(cjk_spaced(text))


def token_spans(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, token)`` of every token of ``text``, in order: character offsets of the word each
    token was made of (``match_spans`` quotes them; search/spans.py)."""
    return _offset_tokens(text)


@functools.cache
def _written() -> tantivy.TextAnalyzer:
    """The analyser's words before stemming: the query as written (lower case, folded)."""
    return _words_builder().build()


def query_terms(query: str) -> list[str]:
    """What BM25, the gate and snippets look for: the tokens of ``query``, in order, without repeats.

    A verb followed within ``PARTICLE_REACH`` words by a particle ("set this up", "log in", "roll the
    deploy back") also matches the compound the pair is written as in prose ("setup", "login",
    "rollback"): its term is then its token and the compounds', space-separated ("set setup"; a token
    never holds a space). Empty for a query of stop words and punctuation alone.
    """
    words = _written().analyze(cjk_spaced(query))
    tokens = list(dict.fromkeys(_content_tokens(words)))
    if not tokens:
        return []
    own = set(tokens)
    taken = set(tokens)
    compounds: dict[str, list[str]] = {}
    for i, particle in enumerate(words):
        if particle not in PARTICLES:
            continue
        for verb in reversed(words[max(0, i - PARTICLE_REACH) : i]):
            if verb in PARTICLES:  # that one has its own particle: "set this up in ..."
                break
            token = word_token(verb) if verb.isalnum() else ""
            if token not in own:  # a stop word, or too long: not among the query's tokens
                continue
            for form in dict.fromkeys((verb + particle, token + particle)):
                compound = word_token(form)
                if compound and compound not in taken:  # each token stands for one term
                    taken.add(compound)
                    compounds.setdefault(token, []).append(compound)
    return [" ".join([token, *compounds.get(token, ())]) for token in tokens]


def content_tokens(text: str) -> list[str]:
    """The tokens of ``text``'s words that are not stop words, in order (repeats kept)."""
    return list(_content_tokens(_written().analyze(cjk_spaced(text))))


def _content_tokens(words: Iterable[str]) -> Iterator[str]:
    for word in words:
        if word not in STOP_WORDS:
            token = word_token(word)
            if token:
                yield token


def term_words(query: str) -> dict[str, str]:
    """For each content token of ``query``, the word it was written as (lower case, before stemming; the
    first such word)."""
    out: dict[str, str] = {}
    for word in _written().analyze(cjk_spaced(query)):
        if word not in STOP_WORDS:
            token = word_token(word)
            if token:
                out.setdefault(token, word)
    return out


# Endings stripped before looking a word up in ``english_zipf``: an inflected or derived form is rarer
# than its stem ("webhooks" 1.0, "webhook" 1.5; "onboarded"), yet names the same concept.
_ENDINGS = ("s", "es", "ed", "d", "ing", "ly", "er", "ers")


@functools.lru_cache(maxsize=WORD_CACHE_SIZE)
def english_zipf(word: str) -> float:
    """How common ``word`` is in general English, on the Zipf scale (log10 of its occurrences per billion
    words: "the" 7.7, "merchant" 4.1, "fortnight" 3.4, "Elasticsearch" 1.8, unknown 0.0), from wordfreq's
    bundled lists; the highest of the word and its forms without a common ending. The first call loads
    wordfreq (~1 s): the daemon does it at start-up, in a thread (``start_loading_english``)."""
    from wordfreq import zipf_frequency  # on first use: see the docstring

    ends = (end for end in _ENDINGS if word.endswith(end) and len(word) - len(end) >= 3)
    zipf = max(zipf_frequency(form, "en") for form in {word, *(word[: -len(end)] for end in ends)})
    _english_loaded.set()
    return zipf


_english_loaded = threading.Event()
_english_loading = threading.Lock()
_english_started = False


def english_loaded() -> bool:
    """Whether ``english_zipf`` answers at once (its word list is loaded)."""
    return _english_loaded.is_set()


def start_loading_english() -> None:
    """Load ``english_zipf``'s word list in a background thread, once; returns at once."""
    global _english_started
    with _english_loading:
        if _english_started:
            return
        _english_started = True
    threading.Thread(target=english_zipf, args=("the",), name="english-zipf", daemon=True).start()


def term_tokens(terms: Sequence[str]) -> list[str]:
    """Every token of ``terms`` (each a token, or a token and its compounds), in order, without repeats."""
    return list(dict.fromkeys(token for term in terms for token in term.split()))


_word_tokens: dict[str, str] = {}
# A word seen with each token ("service" for "servic"): the gate finds it with ``in`` before anything else.
_a_word_of: dict[str, str] = {}
_segment_tokens: dict[str, tuple[tuple[int, str], ...]] = {}


def word_token(word: str) -> str:
    """The token of one word (a run of letters and digits, lower-cased), "" if it has none (too long).
    Cached."""
    token = _word_tokens.get(word)
    if token is None:
        tokens = analyze(word)
        token = tokens[0] if tokens else ""
        if len(_word_tokens) >= WORD_CACHE_SIZE:
            _word_tokens.clear()
            _a_word_of.clear()
        _word_tokens[word] = token
        _a_word_of.setdefault(token, word)
    return token


def starts(token: str) -> tuple[str, ...]:
    """What every word whose token is ``token`` begins with, one of these (lower-cased): the token, or,
    where the stemmer may have written the token's last letter, the token with the letter the word has
    there instead (see the module's doc)."""
    if len(token) < 2:
        return (token,)
    head = token[:-1]  # never empty: every start holds a letter, found only before a word's end
    if token.endswith("ie") and len(token) > 2:  # "dying" -> "die"
        return token, f"{token[:-2]}y"
    if token.endswith("e"):  # "hoping" -> "hope", "agency" -> "agence", "relational" -> "relate"
        return token, f"{head}i", f"{head}y", f"{head}o"
    if token.endswith("i"):  # "happy" -> "happi"
        return token, f"{head}y"
    if token.endswith(("y", "bl")):  # "skies" -> "sky", "capability" -> "capabl"
        return token, f"{head}i"
    return (token,)


def _look_for(token: str) -> tuple[str, str | None, str]:
    """What ``TokenFinder`` scans a text for to find the words of ``token`` (the text as ``_words`` gives
    it): " " + what their starts share (a word start), the letters that may follow it there (None: any),
    and " word " for a word known to have the token (the token itself if it is one, as "job"; "service"
    for "servic" once seen), else a string never found."""
    start, follow = _start_of(token)
    word = token if word_token(token) == token else _a_word_of.get(token)
    return start, follow, f" {word} " if word else "\0"


@functools.lru_cache(maxsize=4096)  # queries repeat their words
def _start_of(token: str) -> tuple[str, str | None]:
    begins = starts(token)
    if len(begins) == 1:
        return f" {token}", None
    shared = _shared_start(list(begins))
    return f" {shared}", "".join(dict.fromkeys(b[len(shared)] for b in begins))


class TokenFinder:
    """Which of a query's terms a text holds, and where: exactly what analysing the text would give.

    Built once per query from ``query_terms`` (a term is held where any of its tokens is). ``held``
    answers for the gate (a bit per term), ``positions`` for snippets.
    """

    def __init__(self, terms: Sequence[str]) -> None:
        self.terms = list(dict.fromkeys(t for t in terms if t))
        self._index: dict[str, int] = {}
        # Per token: its term's index, the token, and what to look for (``_look_for``).
        self._tokens: list[tuple[int, str, str, str | None, str]] = []
        # For the gate: terms of one token (most), each on its own; then the others (a token and its
        # compounds), looked for only where the start their tokens share is found.
        self._single: list[tuple[int, str, str, str | None, str]] = []
        self._several: list[tuple[int, str, list[tuple[str, str, str | None, str]]]] = []
        for j, term in enumerate(self.terms):
            looks = []
            for token in term.split():
                if token not in self._index:  # query_terms gives each token to one term
                    self._index[token] = j
                    looks.append((token, *_look_for(token)))
                    self._tokens.append((j, *looks[-1]))
            if len(looks) == 1:
                self._single.append((1 << j, *looks[0]))
            elif looks:
                self._several.append((1 << j, _shared_start([look[1] for look in looks]), looks))

    def held(self, text: str) -> int:
        """Bit ``j`` set when analysing ``text`` gives a token of term ``j``."""
        mask = 0
        if text.isascii():  # as _words does, without a call (this runs for every candidate row)
            words = f" {text.encode('ascii').translate(_WORDS_ONLY).decode('ascii')}  "
        else:
            found = _words(text)
            if found is None:  # mostly outside ASCII: analysed whole
                return self._held_by_tokens(analyze(text))
            words, others = found
            mask = self._held_by_tokens(token for _, token in others)
        # ``in`` first: most terms are absent from most rows, and it is cheaper than a call to find. Where
        # the start is found, its first word most often has the token (tried here without a call).
        for bit, token, start, follow, whole in self._single:
            if start in words and not mask & bit and (whole in words or _holds(words, token, start, follow)):
                mask |= bit
        for bit, shared, tokens in self._several:
            if shared in words and not mask & bit:
                for token, start, follow, whole in tokens:
                    if start in words and (whole in words or _holds(words, token, start, follow)):
                        mask |= bit
                        break
        return mask

    def _held_by_tokens(self, tokens: Iterable[str]) -> int:
        mask = 0
        index = self._index
        for token in tokens:
            j = index.get(token)
            if j is not None:
                mask |= 1 << j
        return mask

    def positions(self, text: str) -> list[tuple[int, int]]:
        """``(offset, term index)`` of each word of ``text`` whose token is a query term's, in order."""
        if not self._tokens:
            return []
        index = self._index
        found = _words(text)
        if found is None:
            return [(start, index[token]) for start, _end, token in _offset_tokens(text) if token in index]
        words, others = found
        hits = [(at, index[token]) for at, token in others if token in index]
        for j, token, start, follow, _ in self._tokens:
            if start in words:
                hits.extend((at, j) for at in _starts(words, token, start, follow))
        hits.sort()
        return hits

    def spans(self, text: str) -> list[tuple[int, int]]:
        """``(start, end)`` character offsets of each word of ``text`` whose token is a query term's, in
        order (``match_spans``). Found as ``positions`` finds them, ends where the word ends; a text in
        which a word holding a letter outside ASCII matches is analysed whole instead (its token's word
        may end before the letters do)."""
        if not self._tokens:
            return []
        found = _words(text)
        if found is not None and not any(token in self._index for _, token in found[1]):
            words = found[0]
            spans: list[tuple[int, int]] = []
            for _j, token, start, follow, _whole in self._tokens:
                if start in words:
                    # ``words`` has a space first: a word at ``at`` there is at ``at`` in the text, and
                    # ends one before the space that follows it.
                    spans.extend(
                        (at, words.find(" ", at + 1) - 1) for at in _starts(words, token, start, follow)
                    )
            spans.sort()
            return spans
        tokens = self._index
        return [(start, end) for start, end, token in token_spans(text) if token in tokens]


def _shared_start(starts: list[str]) -> str:
    shared = starts[0]
    for start in starts[1:]:
        while not start.startswith(shared):
            shared = shared[:-1]
    return shared


def _words(text: str) -> tuple[str, list[tuple[int, str]]] | None:
    """``text``'s ASCII words, lower-cased, each between spaces, at its offset + 1 (a space is put first);
    and ``(offset, token)`` of each token of its words outside ASCII. None for a text mostly outside
    ASCII (analyse it whole).

    A word holding a character outside ASCII ("café", "naïve") is blanked and analysed alone (cached:
    the words of a corpus repeat): the analyser splits at separators only, so its tokens are the text's.
    Other characters outside ASCII are separators (typographic punctuation, spaces): spaces too.
    """
    if text.isascii():  # two spaces last: every start found is followed by a character and a space
        return f" {text.encode('ascii').translate(_WORDS_ONLY).decode('ascii')}  ", []
    others: list[tuple[int, str]] = []
    blanked = _blank_words_outside_ascii(text, others)
    if blanked is None:
        return None
    return f" {blanked.encode('ascii', 'replace').translate(_WORDS_ONLY).decode('ascii')}  ", others


def _blank_words_outside_ascii(text: str, others: list[tuple[int, str]]) -> str | None:
    """``text`` with every word that holds a character outside ASCII (other than separators) replaced by
    as many spaces; its tokens added to ``others``. None past ``MAX_SHADOWED`` such words: each costs
    steps in Python, and analysing the whole text is then cheaper."""
    pieces: list[str] = []
    last = 0
    for outside in _IN_WORD_OUTSIDE_ASCII.finditer(text):
        at = outside.start()
        if at < last:  # in a word already taken
            continue
        if len(pieces) >= 2 * MAX_SHADOWED:
            return None
        start = _word_start(text, last, at)
        rest = _WORD_REST.match(text, at)
        end = rest.end() if rest is not None else at + 1  # never None: the pattern matches ""
        others.extend((start + offset, token) for offset, token in _tokens_at(text[start:end]))
        pieces.append(text[last:start])
        pieces.append(" " * (end - start))
        last = end
    if not pieces:  # nothing outside ASCII but separators (typographic punctuation, spaces)
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def _word_start(text: str, last: int, at: int) -> int:
    """Where the word holding ``text[at]`` starts (not before ``last``)."""
    low = max(last, at - 32)  # words are short: look a little way back, in C
    head = _WORD_HEAD.search(text, low, at)
    start = head.start() if head is not None else at
    while start == low and start > last and _in_word(text[start - 1]):  # a long word: walk on
        start -= 1
        low = start
    return start


def _in_word(char: str) -> bool:
    """Whether ``char`` may belong to a word: a letter or digit in ASCII, anything but a known separator
    outside it (a word holding a separator the analyser knows of is split by it there)."""
    return char.isalnum() if char.isascii() else char not in SEPARATORS_OUTSIDE_ASCII


def _holds(words: str, token: str, start: str, follow: str | None) -> bool:
    """Whether a word of ``words`` (as ``_words`` gives them) at ``start``, then one of ``follow``, has the
    token ``token``."""
    find = words.find
    after = len(start)
    at = find(start)
    while at >= 0:
        if follow is not None and words[at + after] not in follow:
            at = find(start, at + after)
            continue
        end = find(" ", at + 1)
        if word_token(words[at + 1 : end]) == token:
            return True
        at = find(start, end)
    return False


def _starts(words: str, token: str, start: str, follow: str | None) -> list[int]:
    """Where each word of ``words`` whose token is ``token`` starts, in the text they come from."""
    found: list[int] = []
    find = words.find
    after = len(start)
    at = find(start)
    while at >= 0:
        if follow is not None and words[at + after] not in follow:
            at = find(start, at + after)
            continue
        end = find(" ", at + 1)
        if word_token(words[at + 1 : end]) == token:
            found.append(at)  # words has a space first: at is the word's offset in the text
        at = find(start, end)
    return found


def _tokens_at(word: str) -> tuple[tuple[int, str], ...]:
    """``(offset, token)`` of each token of a word outside ASCII. Cached."""
    found = _segment_tokens.get(word)
    if found is None:
        found = tuple((start, token) for start, _end, token in _offset_tokens(word))
        if len(_segment_tokens) >= WORD_CACHE_SIZE:
            _segment_tokens.clear()
        _segment_tokens[word] = found
    return found


# ASCII characters that are not letters or digits: tantivy splits words at each, and none has a case
# variant, so a phrase's one matches exactly itself (or, for its spaces, a whitespace run: never a word
# character either).
_ASCII_SEPARATOR = re.compile(r"[\x00-/:-@\[-`{-\x7f]")
_ASCII_WORD = re.compile(r"[0-9A-Za-z]+")
# ASCII letters whose case-insensitive match may be a character outside ASCII (RE2's case folding: K is
# the Kelvin sign U+212A, s the long s U+017F; tests/test_analysis.py checks there are no others and that
# the analyser reads them as k and s), which takes this many more UTF-8 bytes.
_WIDER_VARIANTS = {"k": 2, "s": 1}


def phrase_runs(words: Sequence[str]) -> list[tuple[str, ...]]:
    """Runs of index tokens every text holding the phrase ``words`` holds, each run's tokens at consecutive
    positions (a tantivy phrase query): a phrase scan may read only the chunks holding all of them
    (storage/reader.py; ADR 0057). Empty: nothing is sure.

    The phrase (``words`` joined by whitespace runs) matches as a case-insensitive substring
    (search/phrase.py), so it may begin or end inside a word of the text. Its pieces between two ASCII
    separators (space or punctuation) are whole words wherever it matches: the text holds the same
    separators around them (whitespace for a space), and no other token between two of them. Such a
    piece gives its tokens when it is all ASCII letters and digits (its match is the same letters in any
    case, or K and ſ, which lower-case and fold to k and s; short enough that no variant reaches
    ``MAX_TOKEN_BYTES``) or all Han, Hiragana and Katakana (no case: its match is itself, read as the same
    bigrams, written between spaces). A piece that gives none (an accented word, a long one) ends a run.
    Stop words are in the index (only queries drop them); stemming acts on a word alone, the same in the
    query and the text."""
    pieces = _ASCII_SEPARATOR.split(" ".join(words))
    runs: list[tuple[str, ...]] = []
    run: list[str] = []
    for piece in pieces[1:-1]:  # the first and last may be parts of a longer word of the text
        if not piece:  # between two separators: no token, the run goes on
            continue
        sure = _CJK_RUN.fullmatch(piece) is not None
        if _ASCII_WORD.fullmatch(piece):
            sure = len(piece) + sum(_WIDER_VARIANTS.get(c, 0) for c in piece.lower()) < MAX_TOKEN_BYTES
        if sure:
            run.extend(analyze(piece))
        elif run:
            runs.append(tuple(run))
            run = []
    if run:
        runs.append(tuple(run))
    return runs

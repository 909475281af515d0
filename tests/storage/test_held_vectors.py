"""A held corpus's vectors (storage/held_vectors.py): float32 for small corpora; past ``EXACT_ROWS``, 16-bit
codes, half the memory, with scores within ~1e-5 of the exact cosine, so rankings are the exact ones
wherever scores differ by more. Every behaviour holds in both forms (``exact_rows`` 0 forces the codes)."""

from __future__ import annotations

import numpy as np
import pytest

from hallouminate.storage.held_vectors import BLOCK, EXACT_ROWS, HeldVectors

DIM = 384


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    m = rng.standard_normal((n, DIM)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def _held(vectors: np.ndarray, exact_rows: int, pieces: int = 3) -> HeldVectors:
    held = HeldVectors(len(vectors), DIM, exact_rows)
    for part in np.array_split(vectors, pieces):
        held.put(part)
    return held.trimmed()


FORMS = pytest.mark.parametrize("exact_rows", [0, EXACT_ROWS], ids=["codes", "float32"])


@pytest.fixture(scope="module", params=[0, EXACT_ROWS], ids=["codes", "float32"])
def world(request: pytest.FixtureRequest) -> tuple[np.ndarray, HeldVectors, np.ndarray]:
    rng = np.random.default_rng(7)
    exact = _unit(rng, 3 * BLOCK + 17)  # several scoring blocks and a ragged last one
    held = _held(exact, request.param)
    assert held.exact == (request.param > 0)
    return exact, held, _unit(rng, 8).T


def test_scores_are_the_cosine_to_within_rounding(
    world: tuple[np.ndarray, HeldVectors, np.ndarray],
) -> None:
    exact, held, queries = world
    for query in queries.T:
        assert np.abs(held.scores(query) - exact @ query).max() < 2e-5


def test_a_block_of_queries_scores_like_each_query_alone(
    world: tuple[np.ndarray, HeldVectors, np.ndarray],
) -> None:
    _exact, held, queries = world
    block = held.scores(queries)
    assert block.shape == (len(held), queries.shape[1])
    for k in range(queries.shape[1]):
        np.testing.assert_allclose(block[:, k], held.scores(queries[:, k]), atol=1e-6)


def test_the_top_ten_are_the_exact_top_ten(world: tuple[np.ndarray, HeldVectors, np.ndarray]) -> None:
    exact, held, queries = world
    for query in queries.T:
        truth = np.argsort(-(exact @ query))[:10]
        assert list(np.argsort(-held.scores(query))[:10]) == list(truth)


def test_a_subset_is_scored_as_in_the_full_product(
    world: tuple[np.ndarray, HeldVectors, np.ndarray],
) -> None:
    _exact, held, queries = world
    subset = np.arange(5, len(held), 3)  # spans several blocks
    query = queries[:, 0]
    np.testing.assert_allclose(held.scores(query, subset), held.scores(query)[subset], atol=1e-6)


def test_vectors_come_back_unit_and_close(world: tuple[np.ndarray, HeldVectors, np.ndarray]) -> None:
    exact, held, _queries = world
    places = np.array([0, BLOCK, len(held) - 1])
    back = held.vectors(places)
    assert back.dtype == np.float32
    assert np.abs(back - exact[places]).max() < 1e-4
    assert np.abs(held.vectors(places[0]) - exact[places[0]]).max() < 1e-4  # one place: one vector


def test_codes_take_half_the_memory_of_float32() -> None:
    exact = _unit(np.random.default_rng(1), 100)
    assert _held(exact, 0).nbytes == exact.nbytes / 2 + 4 * len(exact)  # the codes, and a scale each
    assert _held(exact, EXACT_ROWS).nbytes == exact.nbytes


def test_the_form_follows_the_count() -> None:
    assert HeldVectors(EXACT_ROWS, DIM).exact
    assert not HeldVectors(EXACT_ROWS + 1, DIM).exact


@FORMS
def test_vectors_are_normalised_and_a_zero_vector_scores_zero(exact_rows: int) -> None:
    held = HeldVectors(2, DIM, exact_rows)
    long = np.full((1, DIM), 3.0, dtype=np.float32)
    held.put(np.concatenate([long, np.zeros((1, DIM), np.float32)]))
    query = np.full(DIM, 1 / np.sqrt(DIM), dtype=np.float32)
    scores = held.scores(query)
    assert scores[0] == pytest.approx(1.0, abs=1e-5)
    assert scores[1] == 0.0


@FORMS
def test_more_rows_than_counted_grow_the_held_vectors(exact_rows: int) -> None:
    """Rows committed between the count and the read: ``put`` grows instead of failing."""
    rng = np.random.default_rng(3)
    exact = _unit(rng, 50)
    held = HeldVectors(20, DIM, exact_rows)
    held.put(exact[:30])
    held.put(exact[30:])
    held.trimmed()
    assert len(held) == 50
    assert np.abs(held.scores(exact[42]) - exact @ exact[42]).max() < 2e-5


@FORMS
def test_nothing_held_scores_nothing(exact_rows: int) -> None:
    held = HeldVectors(0, DIM, exact_rows - 1).trimmed()
    assert held.scores(np.ones(DIM, np.float32) / np.sqrt(DIM)).shape == (0,)
    assert held.scores(np.ones((DIM, 4), np.float32)).shape == (0, 4)

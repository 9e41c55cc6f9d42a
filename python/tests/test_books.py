"""A book (the top layers of a solved db, written by `gops book`) read from Python: the
states below its layers are solved on demand, and every value and strategy is the full
db's, bit for bit."""

import random

import pytest

import gops
from conftest import gops_cli


def random_states(n, below, count, rng):
    """States with fewer than `below` cards left along random games, with an upcard."""
    states = []
    while len(states) < count:
        a, b, prizes, diff = list(range(1, n + 1)), list(range(1, n + 1)), list(range(1, n + 1)), 0
        while prizes:
            upcard = rng.choice(prizes)
            if len(prizes) < below:
                states.append((list(a), list(b), list(prizes), diff, upcard))
            x, y = rng.choice(a), rng.choice(b)
            diff += upcard * ((x > y) - (x < y))
            a.remove(x)
            b.remove(y)
            prizes.remove(upcard)
    return states[:count]


def test_a_book_answers_from_python_as_the_full_db(solved, tmp_path):
    for n, objective, below in [(8, "win", 6), (9, "points", 7)]:
        full = solved(n, objective)
        book = tmp_path / f"book-{objective}"
        gops_cli("book", "--db", str(full), "--from-layer", str(below), "--out", str(book))
        rng = random.Random(n)
        with gops.open(full) as whole, gops.open(book) as part:
            for a, b, prizes, diff, upcard in random_states(n, below, 100, rng):
                assert part.value(a, b, prizes, diff) == whole.value(a, b, prizes, diff)
                ours = part.strategy(a, b, prizes, upcard, diff)
                theirs = whole.strategy(a, b, prizes, upcard, diff)
                assert (ours.value, ours.gap) == (theirs.value, theirs.gap)
                assert list(ours.strategy_a) == list(theirs.strategy_a)
                assert list(ours.strategy_b) == list(theirs.strategy_b)


def test_a_rolling_solve_returns_its_book(solved, tmp_path):
    full = solved(8, "win")
    rolling = gops.solve(8, "win", db=tmp_path / "rolling", progress=False, keep_from_layer=6)
    assert [l.checksum for l in rolling.layers] == [l.checksum for l in gops.open(full).layers]
    assert not (tmp_path / "rolling" / "slices-04.dat").exists()
    assert (tmp_path / "rolling" / "slices-06.dat").exists()
    rng = random.Random(3)
    with gops.open(full) as whole:
        for a, b, prizes, diff, upcard in random_states(8, 6, 30, rng):
            assert rolling.value(a, b, prizes, diff) == whole.value(a, b, prizes, diff)
    with pytest.raises(ValueError, match="not a layer"):
        gops.solve(8, "win", db=tmp_path / "other", progress=False, keep_from_layer=9)
    assert not (tmp_path / "other").exists()


def test_a_tight_on_demand_limit_is_refused_with_pythons_own_advice(solved, tmp_path):
    full = solved(8, "win")
    book = tmp_path / "book"
    gops_cli("book", "--db", str(full), "--from-layer", "7", "--out", str(book))
    # A won the 7 (7 against 1), the 6 was tied (8 against 8)
    a, b, prizes, diff = [1, 2, 3, 4, 5, 6], [2, 3, 4, 5, 6, 7], [1, 2, 3, 4, 5, 8], 7
    with gops.open(book, max_on_demand_games=1) as tight:
        with pytest.raises(gops.DbError, match=r"over the limit of 1: .*raise max_on_demand_games \(of gops.open\)") as refused:
            tight.value(a, b, prizes, diff)
        assert "--max-on-demand-games" not in str(refused.value)
    # a subtree of 8 cards left (the 9-card win game's, below a book of layer 9)
    # may need up to 7 MB
    larger = tmp_path / "book-9"
    gops_cli("book", "--db", str(solved(9, "win")), "--from-layer", "9", "--out", str(larger))
    with gops.open(larger, memory_mb=1, max_on_demand_games=10**12) as small:
        with pytest.raises(gops.DbError, match=r"raise memory_mb \(of gops.open\)"):
            small.value(list(range(1, 9)), list(range(1, 9)), list(range(1, 9)), 0)
    with gops.open(book, max_on_demand_games=10**12, memory_mb=4096) as roomy, gops.open(full) as whole:
        assert roomy.value(a, b, prizes, diff) == whole.value(a, b, prizes, diff)
    for bad in [{"max_on_demand_games": 0}, {"memory_mb": 0}]:
        with pytest.raises(ValueError, match="at least 1"):
            gops.open(book, **bad)

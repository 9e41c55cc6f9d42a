#!/usr/bin/env python3
"""A book against the full db it was made from, state by state, through `gops`.

Plays random games from the start (seeded), keeps the states with fewer cards left than
the book's lowest layer, and for each asks both dbs `gops value --json` and `gops strategy
--json` (a random upcard), requiring the same JSON (every value and probability printed
with all its bits). Each query is its own process, so every answer the book solves on
demand is solved cold; the report gives the book's wall time per query by cards left
(p50 and max) against the full db's.

    scripts/compare_book.py --book results/books/points-13 --full /data/p13 --states 300

With --python, both dbs are asked in this process through the `gops` Python package
(`gops.open`): the subtrees a book solves stay in memory from state to state, and the
report gives the whole run's time.
"""

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from collections import defaultdict


def query(gops, db, state, upcard=None):
    a, b, prizes, diff = state
    args = [gops, "--log", "warn", "value" if upcard is None else "strategy", "--db", db,
            "--a", ",".join(map(str, a)), "--b", ",".join(map(str, b)),
            "--prizes", ",".join(map(str, prizes)), "--diff", str(diff), "--json"]
    if upcard is not None:
        args += ["--upcard", str(upcard)]
    started = time.monotonic()
    out = subprocess.run(args, capture_output=True, text=True)
    took = time.monotonic() - started
    if out.returncode != 0:
        sys.exit(f"{' '.join(args)} failed: {out.stderr.strip()}")
    return json.loads(out.stdout), took


def random_states(n, below, count, rng):
    """States with fewer than `below` cards left along random games, each with an upcard."""
    states = []
    while len(states) < count:
        a, b, prizes, diff = list(range(1, n + 1)), list(range(1, n + 1)), list(range(1, n + 1)), 0
        while prizes:
            upcard = rng.choice(prizes)
            if len(prizes) < below:
                states.append(((tuple(a), tuple(b), tuple(prizes), diff), upcard))
            x, y = rng.choice(a), rng.choice(b)
            diff += upcard * ((x > y) - (x < y))
            a.remove(x)
            b.remove(y)
            prizes.remove(upcard)
    rng.shuffle(states)
    return states[:count]


def compare_in_process(args, states, below):
    """Both dbs asked through `gops.open`; 1 if any answer differs."""
    import gops

    different = 0
    started = time.monotonic()
    with gops.open(args.full) as whole, gops.open(args.book) as part:
        for (a, b, prizes, diff), upcard in states:
            if part.value(a, b, prizes, diff) != whole.value(a, b, prizes, diff):
                different += 1
            ours = part.strategy(a, b, prizes, upcard, diff)
            theirs = whole.strategy(a, b, prizes, upcard, diff)
            if (ours.value, ours.gap, list(ours.strategy_a), list(ours.strategy_b)) != (
                theirs.value, theirs.gap, list(theirs.strategy_a), list(theirs.strategy_b)
            ):
                different += 1
    print(f"{len(states)} states of layers 1..{below - 1} (value and one strategy each, "
          f"in process): {different} different answers, {time.monotonic() - started:.1f} s")
    return 1 if different else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--book", required=True)
    parser.add_argument("--full", required=True)
    parser.add_argument("--states", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--gops", default="gops")
    parser.add_argument("--python", action="store_true")
    args = parser.parse_args()
    with open(f"{args.book}/manifest.json") as f:
        manifest = json.load(f)
    n, below = manifest["n"], manifest["book"]["from_layer"]
    rng = random.Random(args.seed)
    if args.python:
        sys.exit(compare_in_process(args, random_states(n, below, args.states, rng), below))
    times = defaultdict(lambda: ([], []))
    different = 0
    for i, (state, upcard) in enumerate(random_states(n, below, args.states, rng)):
        for up in (None, upcard):
            ours, t_book = query(args.gops, args.book, state, up)
            theirs, t_full = query(args.gops, args.full, state, up)
            if ours != theirs:
                different += 1
                print(f"DIFFERENT at {state} upcard {up}: {ours} != {theirs}")
            times[len(state[2])][0].append(t_book)
            times[len(state[2])][1].append(t_full)
        if (i + 1) % 50 == 0:
            print(f"{i + 1} states compared", file=sys.stderr)
    print(f"{args.states} states of layers 1..{below - 1} (value and one strategy each): "
          f"{different} different answers")
    print("cards left | queries | book p50 s | book max s | full db p50 s | full db max s")
    for k in sorted(times):
        book, full = times[k]
        print(f"{k} | {len(book)} | {statistics.median(book):.3f} | {max(book):.3f} | "
              f"{statistics.median(full):.3f} | {max(full):.3f}")
    sys.exit(1 if different else 0)


if __name__ == "__main__":
    main()

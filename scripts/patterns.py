#!/usr/bin/env python3
"""The equilibrium's recurring patterns, by round: how far its bid is from the upcard, how
many cards it mixes over, and how often its bid has the upcard's parity (the even-odd
behaviour Rhoads and Bartholdi noted), measured along games of the equilibrium against
itself: at each of A's decisions, its exact mix (from the db) weighs every card.

    python3 scripts/patterns.py --db DB [--games 2000] [--seed 13] [--markdown]

Prints one line per round (JSON lines, or with --markdown the table RESULTS.md shows):
the mean of bid - upcard, the shares of the bid at the upcard (d = 0), one above (+1),
two above (+2), below (d < 0), the mean support size (cards above 5e-7) and the share of
bids with the upcard's parity. Needs the `gops` Python package (pip install ./python).
"""

import argparse
import json
import random

import gops


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    db = gops.open(args.db)
    n = db.n
    rng = random.Random(args.seed)
    keys = ("mean_d", "d0", "d1", "d2", "below", "support", "same_parity")
    sums = [dict.fromkeys(keys, 0.0) for _ in range(n)]
    for _ in range(args.games):
        a, b, prizes, diff = list(range(1, n + 1)), list(range(1, n + 1)), list(range(1, n + 1)), 0
        for rnd in range(n):
            upcard = rng.choice(prizes)
            s = db.strategy(a, b, prizes, upcard, diff)
            row = sums[rnd]
            for card, p in zip(s.cards_a, s.strategy_a):
                d = int(card) - upcard
                p = float(p)
                row["mean_d"] += p * d
                row["d0"] += p * (d == 0)
                row["d1"] += p * (d == 1)
                row["d2"] += p * (d == 2)
                row["below"] += p * (d < 0)
                row["same_parity"] += p * (d % 2 == 0)
            row["support"] += sum(1 for p in s.strategy_a if p > 5e-7)
            bid_a = int(rng.choices(list(s.cards_a), weights=list(s.strategy_a))[0])
            bid_b = int(rng.choices(list(s.cards_b), weights=list(s.strategy_b))[0])
            diff += upcard * ((bid_a > bid_b) - (bid_a < bid_b))
            a.remove(bid_a)
            b.remove(bid_b)
            prizes.remove(upcard)
    rows = [{"round": r + 1, **{k: v / args.games for k, v in sums[r].items()}} for r in range(n)]
    if not args.markdown:
        for row in rows:
            print(json.dumps(row))
        return
    print("| round | mean bid − upcard | d = 0 | d = +1 | d = +2 | d < 0 | cards mixed over | same parity as the upcard |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row['round']} | {row['mean_d']:+.2f} | {row['d0']:.1%} | {row['d1']:.1%} | {row['d2']:.1%} "
            f"| {row['below']:.1%} | {row['support']:.2f} | {row['same_parity']:.1%} |"
        )


if __name__ == "__main__":
    main()

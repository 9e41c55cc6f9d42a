#!/usr/bin/env python3
"""What a best response to a rule earns from round R on, the first rounds played by the
equilibrium: A plays the db's equilibrium for rounds 1 to R - 1 against B's model
(sampled), then the exact best response to the model from the state reached
(`gops.respond`, exact on the subtree: a book solves it on demand). The mean over
sampled games, with its 95 % interval, of A's result: for `points` the score difference
so far plus the best response's exact expected score still to come; for `win`, the best
response's exact P(win) - P(loss) from there.

    python3 scripts/respond_from_round.py --db DB --opponent upcard [--round 4] [--games 20] [--seed 13]

Prints one JSON line (each game's result on stderr as it ends). Needs the `gops` Python
package (pip install ./python).
"""

import argparse
import json
import math
import random
import sys
import time

import gops


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--opponent", required=True)
    parser.add_argument("--round", type=int, default=4)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    db = gops.open(args.db)
    n = db.n
    rng = random.Random(args.seed)
    model = gops.Agent(db, args.opponent)
    results, seconds = [], []
    for game in range(args.games):
        a, b, prizes, diff, history = [*range(1, n + 1)], [*range(1, n + 1)], [*range(1, n + 1)], 0, []
        for rnd in range(1, args.round):
            upcard = rng.choice(prizes)
            s = db.strategy(a, b, prizes, upcard, diff)
            bid_a = int(rng.choices(list(s.cards_a), weights=list(s.strategy_a))[0])
            request = {
                "game": game, "round": rnd, "n": n, "objective": db.objective, "seat": "B",
                "hand": b, "opponent_hand": a, "prizes": prizes, "upcard": upcard,
                "diff": -diff, "history": history,
            }
            mix = json.loads(model.decide(json.dumps(request)))
            cards = [int(c) for c in mix]
            bid_b = rng.choices(cards, weights=[mix[str(c)] for c in cards])[0]
            history = history + [{"prize": upcard, "bid": bid_b, "opponent_bid": int(bid_a)}]
            diff += upcard * ((bid_a > bid_b) - (bid_a < bid_b))
            a, b, prizes = [c for c in a if c != bid_a], [c for c in b if c != bid_b], [c for c in prizes if c != upcard]
        started = time.monotonic()
        r = gops.respond(db, args.opponent, a=a, b=b, prizes=prizes, diff=diff)
        seconds.append(time.monotonic() - started)
        so_far = diff if db.objective == "points" else 0
        results.append(so_far + r["best_response"])
        print(f"game {game + 1}/{args.games}: {results[-1]:+.6f} ({seconds[-1]:.1f} s)", file=sys.stderr, flush=True)
    mean = sum(results) / len(results)
    sd = math.sqrt(sum((x - mean) ** 2 for x in results) / max(1, len(results) - 1))
    half = 1.959963984540054 * sd / math.sqrt(len(results))
    print(json.dumps({
        "db": args.db, "opponent": args.opponent, "from_round": args.round, "games": args.games,
        "seed": args.seed, "mean": mean, "low": mean - half, "high": mean + half,
        "seconds_each_max": max(seconds), "seconds_each_mean": sum(seconds) / len(seconds),
    }))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The players' tables of RESULTS.md ("Beating the opponent in front of you") for one db:
against each simple rule as B, A's result with the equilibrium, the safe exploiter at
RISK 0 and at --risk (`gops simulate`, --games games, --seed); and the rule card's loss
of each rule against the equilibrium (`gops arena --builtin RULE`, --arena-games games).
A's result is the objective's: for `points` the mean score difference, for `win`
P(win) - P(loss) (simulate's `outcome`), each with its 95 % interval.

    python3 scripts/players_tables.py --db DB [--risk 5] [--games 20000] [--arena-games 10000] [--seed 13] [--jobs J] [--reuse LOG]

Prints the two markdown tables; on stderr, one JSON line per command as it ends (with its
seconds), so that a long run can be read as it goes. The `simulate` runs (one core each)
go --jobs at a time (default: the machine's cores), the `arena` runs (all cores each) one
at a time; the numbers do not depend on it. With --reuse LOG (the stderr of an earlier
run, cut off or not), a command found there with the same arguments is not run again:
its result is taken from LOG and logged again. Uses `gops` on the PATH, or $GOPS_BIN.
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

# one JSON line a command on stderr (the command line sets it)
LOG = False
LOG_LOCK = threading.Lock()
# results of earlier runs, by the command's arguments (--reuse)
REUSED: dict[tuple[str, ...], dict] = {}


def read_log(path: str) -> dict[tuple[str, ...], dict]:
    """The results of an earlier run's log, by the command's arguments (a last line cut
    off by a crash is left out)."""
    out = {}
    with open(path) as f:
        for line in f:
            try:
                entry = json.loads(line)
                out[tuple(entry["command"][1:])] = entry["result"]
            except (ValueError, KeyError, TypeError):
                continue
    return out


RULES = ["upcard", "upcard-plus-one", "greedy", "uniform", "upcard-drift", "upcard-plus-two", "split"]


def gops(*args: str) -> tuple[dict, float]:
    binary = os.environ.get("GOPS_BIN", "gops")
    started = time.monotonic()
    entry = {"command": ["gops", *args]}
    if args in REUSED:
        record = REUSED[args]
        entry["reused"] = True
    else:
        out = subprocess.run([binary, *args], check=True, capture_output=True, text=True).stdout
        record = json.loads(out.strip().splitlines()[-1])
    seconds = time.monotonic() - started
    if LOG:
        line = json.dumps({**entry, "seconds": round(seconds, 1), "result": record})
        with LOG_LOCK:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()
    return record, seconds


def interval(mean: float, low: float, high: float, digits: int) -> str:
    f = f"{{:+.{digits}f}}"
    return f"{f.format(mean)} ({f.format(low)} .. {f.format(high)})"


def measure(db: str, rules: list[str], risk: str, games: int, arena_games: int, seed: int,
            jobs: int = 1) -> list[dict]:
    """One record a rule: `against` (A's result, a mean object, with the equilibrium, the
    safe exploiter at RISK 0 and at `risk`) and `loss` (the rule's loss against the
    equilibrium, [mean, low, high]). `jobs` simulate runs go at once."""

    def simulate(a: str, rule: str) -> dict:
        r, _ = gops("simulate", "--db", db, "--a", a, "--b", rule, "--games", str(games),
                    "--seed", str(seed), "--json")
        return r["score_difference"] if r["objective"] == "points" else r["outcome"]

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        running = {rule: [pool.submit(simulate, a, rule)
                          for a in ["equilibrium", f"exploit:{rule}", f"exploit:{rule}:{risk}"]]
                   for rule in rules}
        results = {rule: [f.result() for f in futures] for rule, futures in running.items()}
    records = []
    for rule in rules:
        against = results[rule]
        r, _ = gops("arena", "--db", db, "--builtin", rule, "--games", str(arena_games), "--seed", str(seed), "--json")
        records.append({"rule": rule, "objective": r["objective"], "against": against,
                        "loss": [r["mean_loss"], *r["loss_ci95"]]})
    return records


def markdown(records: list[dict], risk: str) -> str:
    lines = [f"| B's rule | the equilibrium | the safe exploiter, RISK 0 | the safe exploiter, RISK {risk} |",
             "|---|---|---|---|"]
    for r in records:
        digits = 2 if r["objective"] == "points" else 3
        cells = [interval(m["mean"], m["low"], m["high"], digits) for m in r["against"]]
        lines.append(f"| `{r['rule']}` | " + " | ".join(cells) + " |")
    lines += ["", "| rule | loss a game against the equilibrium (95 % CI) |", "|---|---|"]
    for r in records:
        mean, low, high = r["loss"]
        lines.append(f"| `{r['rule']}` | {mean:.4f} ({low:.4f} .. {high:.4f}) |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--risk", required=True, help="the second RISK (points: 5; win: 0.1)")
    parser.add_argument("--games", type=int, default=20000)
    parser.add_argument("--arena-games", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--rules", default=",".join(RULES), help="comma-separated rules")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="simulate runs at once")
    parser.add_argument("--reuse", metavar="LOG", help="take the results of the commands in LOG (an earlier run's stderr)")
    args = parser.parse_args()
    global LOG
    LOG = True
    if args.jobs < 1:
        parser.error("--jobs: at least 1")
    if args.reuse:
        try:
            REUSED.update(read_log(args.reuse))
        except OSError as e:
            parser.error(f"--reuse: {e}")
    records = measure(args.db, args.rules.split(","), args.risk, args.games, args.arena_games, args.seed, args.jobs)
    print(markdown(records, args.risk))


if __name__ == "__main__":
    main()

"""Tests of scripts/players_tables.py on small solved games: the safe exploiter's rows
against `upcard` gain on the equilibrium's, a uniform bidder loses more to the
equilibrium than `upcard` does, and the `win` tables are in P(win) - P(loss).

    python3 -m unittest discover -s scripts -p 'test_*.py'

Needs target/release/gops (cargo build --release) or GOPS_BIN.
"""

import contextlib
import io
import os
import subprocess
import tempfile
import unittest

import players_tables

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
GOPS = os.environ.get("GOPS_BIN", os.path.join(ROOT, "target", "release", "gops"))


class PlayersTablesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        os.environ["GOPS_BIN"] = GOPS

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def db(self, n, objective):
        db = os.path.join(self.dir.name, f"{objective}{n}")
        if not os.path.exists(db):
            subprocess.run([GOPS, "solve", "--n", str(n), "--objective", objective, "--db", db, "--no-first-moves"],
                           check=True, capture_output=True)
        return db

    def measure(self, n, objective, risk, jobs=1):
        return players_tables.measure(self.db(n, objective), ["upcard", "uniform"], risk, 4000, 1000, 13, jobs)

    def test_points_tables(self):
        upcard, uniform = self.measure(6, "points", "3")
        for record in (upcard, uniform):
            for m in record["against"]:
                self.assertLessEqual(m["low"], m["mean"])
                self.assertLessEqual(m["mean"], m["high"])
        equilibrium, safe, risky = upcard["against"]
        # the safe exploiter at RISK 3 takes far more from `upcard` than the equilibrium
        self.assertGreater(risky["low"], equilibrium["high"])
        self.assertGreater(safe["mean"], equilibrium["mean"])
        self.assertGreater(uniform["loss"][1], upcard["loss"][2])
        table = players_tables.markdown([upcard, uniform], "3")
        self.assertIn("| `upcard` | +", table)
        self.assertIn("RISK 3 |", table)
        self.assertEqual(len(table.splitlines()), 2 + 2 + 1 + 2 + 2)

    def test_win_tables_are_in_wins_less_losses(self):
        upcard, uniform = self.measure(5, "win", "0.1", jobs=3)
        for record in (upcard, uniform):
            for m in record["against"]:
                self.assertTrue(-1.0 <= m["low"] <= m["mean"] <= m["high"] <= 1.0 + 1e-9, m)
        self.assertGreater(upcard["against"][2]["mean"], upcard["against"][0]["mean"])

    def test_the_simulate_runs_at_once_change_no_number(self):
        db = self.db(5, "win")
        one, three = (players_tables.measure(db, ["upcard", "greedy"], "0.1", 500, 100, 7, jobs) for jobs in (1, 3))
        self.assertEqual(one, three)

    def test_a_run_reuses_an_earlier_run_s_log(self):
        db = self.db(5, "win")
        log = io.StringIO()
        players_tables.LOG = True
        try:
            with contextlib.redirect_stderr(log):
                first = players_tables.measure(db, ["upcard"], "0.1", 300, 100, 5)
            path = os.path.join(self.dir.name, "tables.jsonl")
            with open(path, "w") as f:
                f.write(log.getvalue() + '{"command": ["gops", "cut off')
            players_tables.REUSED.update(players_tables.read_log(path))
            self.assertEqual(len(players_tables.REUSED), 4)
            # nothing is run again: a missing binary would fail it
            os.environ["GOPS_BIN"] = os.path.join(self.dir.name, "no-such-gops")
            with contextlib.redirect_stderr(io.StringIO()):
                again = players_tables.measure(db, ["upcard"], "0.1", 300, 100, 5)
            self.assertEqual(first, again)
            with self.assertRaises(FileNotFoundError):
                players_tables.measure(db, ["upcard"], "0.1", 301, 100, 5)
        finally:
            players_tables.LOG = False
            players_tables.REUSED.clear()
            os.environ["GOPS_BIN"] = GOPS


if __name__ == "__main__":
    unittest.main()

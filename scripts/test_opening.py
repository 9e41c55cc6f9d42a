"""Tests of scripts/opening.py against the independent first-move fixtures: it solves the
games the fixture covers (3 to 5 cards points, 3 and 4 cards win) with the built binary, reads their opening strategies through the
script and compares them, where the fixture says the strategy is unique, with
tests/fixtures/first_move.json; checks the total-variation distance and the SVG.

    python3 -m unittest discover -s scripts -p 'test_*.py'

Needs target/release/gops (cargo build --release) or GOPS_BIN.
"""

import json
import os
import subprocess
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree

import opening

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
GOPS = os.environ.get("GOPS_BIN", os.path.join(ROOT, "target", "release", "gops"))
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "first_move.json")


def solve(n, objective, db):
    subprocess.run(
        [GOPS, "solve", "--n", str(n), "--objective", objective, "--db", db, "--no-first-moves"],
        check=True,
        capture_output=True,
    )


class OpeningTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        with open(FIXTURE) as f:
            cls.fixture = json.load(f)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def db(self, n, objective):
        path = os.path.join(self.dir.name, f"{objective}{n}")
        if not os.path.exists(path):
            solve(n, objective, path)
        return path

    def test_openings_match_the_fixture_where_unique(self):
        compared = 0
        for objective, sizes in (("points", (3, 4, 5)), ("win", (3, 4))):
            for n in sizes:
                got_n, got_objective, rows = opening.opening(GOPS, self.db(n, objective))
                self.assertEqual((got_n, got_objective), (n, objective))
                want = self.fixture[objective][str(n)]
                for upcard, row in enumerate(rows, start=1):
                    self.assertAlmostEqual(sum(row), 1.0, places=9)
                    entry = want[str(upcard)]
                    if entry["unique"]:
                        for p, q in zip(row, entry["x"]):
                            self.assertAlmostEqual(p, q, places=5, msg=f"{objective} {n} {upcard}")
                        compared += 1
        self.assertGreater(compared, 10)

    def test_total_variation_and_the_heatmap(self):
        self.assertEqual(opening.total_variation([0.5, 0.5], [0.5, 0.5]), 0.0)
        self.assertEqual(opening.total_variation([1.0, 0.0], [0.0, 1.0]), 1.0)
        self.assertAlmostEqual(opening.total_variation([0.2, 0.8], [0.5, 0.5]), 0.3)
        n, objective, rows = opening.opening(GOPS, self.db(4, "win"))
        svg = opening.svg_heatmap(n, objective, rows)
        root = ElementTree.fromstring(svg)
        cells = [e for e in root.iter("{http://www.w3.org/2000/svg}rect") if e.find("{http://www.w3.org/2000/svg}title") is not None]
        self.assertEqual(len(cells), n * n)
        # each cell names its prize, bid and probability
        title = cells[n + 2].find("{http://www.w3.org/2000/svg}title").text
        self.assertEqual(title, f"prize 2, bid 3: {rows[1][2]:.6f}")

    def test_markdown_tables(self):
        self.assertEqual(opening.probability_cell(4e-7), "0")
        self.assertEqual(opening.probability_cell(6e-7), "0.000001")
        self.assertEqual(opening.probability_cell(0.25), "0.250000")
        db = self.db(4, "win")
        n, _, rows_a = opening.opening(GOPS, db)
        rows_b = opening.opening(GOPS, db, "b")[2]
        lines = opening.markdown_opening(rows_a, rows_b).splitlines()
        self.assertEqual(lines[0], "| upcard | player | 1 | 2 | 3 | 4 |")
        self.assertEqual(len(lines), 2 + 2 * n)
        for upcard in range(1, n + 1):
            for offset, (player, rows) in enumerate((("A", rows_a), ("B", rows_b))):
                cells = [c.strip() for c in lines[2 * upcard + offset].strip("|").split("|")]
                self.assertEqual(cells[:2], [str(upcard), player])
                for cell, p in zip(cells[2:], rows[upcard - 1]):
                    self.assertAlmostEqual(float(cell), p, delta=5e-7)
        distances = opening.markdown_distances(rows_a, rows_b).splitlines()
        self.assertEqual(len(distances), 3)
        self.assertEqual(len(distances[2].strip("|").split("|")), n + 1)


if __name__ == "__main__":
    unittest.main()

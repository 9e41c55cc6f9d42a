#!/usr/bin/env python3
"""Opening strategies of a solved game, read from its db through `gops strategy`.

For each first prize (upcard) of the full game, A's optimal probability of each bid.
Writes them as an SVG heatmap (prize on the vertical axis, bid on the horizontal, darker
for more probability, the probability printed in each cell of 1 % or more), as CSV, and,
given a second db of the same N (the other objective), the total-variation distance
between the two opening strategies per prize: how differently a player bids when playing
to win rather than for points.

    python3 scripts/opening.py --db DB --svg opening.svg [--csv opening.csv]
    python3 scripts/opening.py --db POINTS_DB --compare WIN_DB
    python3 scripts/opening.py --db DB --markdown [--compare OTHER_DB]

`--markdown` prints the tables as RESULTS.md shows them: both players' opening
probabilities per first prize, 6 digits (0 for exactly 0 or below 5e-7), and with
`--compare` the total-variation distance per first prize, 3 digits.

Uses only the standard library and the `gops` binary (`--gops PATH`, default: `gops` on
the PATH, else target/release/gops).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
from xml.sax.saxutils import escape


def find_gops(given):
    if given:
        return given
    on_path = shutil.which("gops")
    if on_path:
        return on_path
    here = os.path.join(os.path.dirname(__file__), "..", "target", "release", "gops")
    if os.path.exists(here):
        return here
    sys.exit("error: no gops binary: build it (cargo build --release) or pass --gops PATH")


def gops_json(gops, args):
    out = subprocess.run([gops, *args, "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"error: gops {' '.join(args)}: {out.stderr.strip()}")
    return json.loads(out.stdout)


def opening(gops, db, player="a"):
    """(n, objective, rows): rows[c - 1] is the player's strategy ("a" or "b") when prize c
    is turned up first."""
    start = gops_json(gops, ["value", "--db", db])
    n, objective = start["n"], start["objective"]
    rows = []
    for upcard in range(1, n + 1):
        game = gops_json(gops, ["strategy", "--db", db, "--upcard", str(upcard)])
        rows.append(game[f"strategy_{player}"])
    return n, objective, rows


def probability_cell(p):
    text = f"{p:.6f}"
    return "0" if float(text) == 0.0 else text


def markdown_opening(rows_a, rows_b):
    """The first-move table: a row per (first prize, player), a column per bid."""
    n = len(rows_a)
    lines = [
        "| upcard | player | " + " | ".join(str(c) for c in range(1, n + 1)) + " |",
        "|---|---|" + "---|" * n,
    ]
    for upcard, (a, b) in enumerate(zip(rows_a, rows_b), start=1):
        for player, row in (("A", a), ("B", b)):
            cells = " | ".join(probability_cell(p) for p in row)
            lines.append(f"| {upcard} | {player} | {cells} |")
    return "\n".join(lines) + "\n"


def markdown_distances(rows, theirs):
    """The total-variation distance per first prize, as one table row."""
    n = len(rows)
    distances = [total_variation(p, q) for p, q in zip(rows, theirs)]
    return (
        "| first prize | " + " | ".join(str(c) for c in range(1, n + 1)) + " |\n"
        + "|---|" + "---|" * n + "\n"
        + "| total variation | " + " | ".join(f"{d:.3f}" for d in distances) + " |\n"
    )


def total_variation(p, q):
    return 0.5 * sum(abs(a - b) for a, b in zip(p, q))


def svg_heatmap(n, objective, rows):
    cell, left, top = 34, 64, 72
    width, height = left + n * cell + 16, top + n * cell + 40
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="20" font-size="14">{escape(f"{n}-card {objective} game")}: '
        "A's opening bid</text>",
    ]
    for j in range(n):
        x = left + j * cell + cell / 2
        out.append(f'<text x="{x}" y="{top - 8}" text-anchor="middle">{j + 1}</text>')
    out.append(
        f'<text x="{left + n * cell / 2}" y="{top - 26}" text-anchor="middle">'
        "bid (the card A plays)</text>"
    )
    out.append(
        f'<text x="16" y="{top + n * cell / 2}" text-anchor="middle" '
        f'transform="rotate(-90 16 {top + n * cell / 2})">first prize turned up</text>'
    )
    for i, row in enumerate(rows):
        y = top + i * cell
        out.append(f'<text x="{left - 8}" y="{y + cell / 2 + 4}" text-anchor="end">{i + 1}</text>')
        for j, p in enumerate(row):
            shade = round(255 * (1 - min(max(p, 0.0), 1.0) ** 0.5))
            fill = f"rgb({shade},{shade},255)"
            x = left + j * cell
            out.append(
                f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{fill}" '
                f'stroke="#ddd"><title>prize {i + 1}, bid {j + 1}: {p:.6f}</title></rect>'
            )
            if p >= 0.01:
                colour = "white" if p > 0.3 else "black"
                out.append(
                    f'<text x="{x + cell / 2}" y="{y + cell / 2 + 4}" text-anchor="middle" '
                    f'font-size="9" fill="{colour}">{round(100 * p)}</text>'
                )
    out.append(
        f'<text x="{left}" y="{height - 12}">numbers: percent (cells under 1 % left blank); '
        "darker: more likely</text>"
    )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, help="a solved db")
    parser.add_argument("--svg", help="write the heatmap here")
    parser.add_argument("--csv", help="write prize,bid,probability rows here")
    parser.add_argument("--compare", help="a db of the same N with the other objective")
    parser.add_argument(
        "--markdown", action="store_true", help="print the tables as RESULTS.md shows them"
    )
    parser.add_argument("--gops", help="the gops binary")
    args = parser.parse_args()
    gops = find_gops(args.gops)
    n, objective, rows = opening(gops, args.db)
    if args.svg:
        with open(args.svg, "w") as f:
            f.write(svg_heatmap(n, objective, rows))
    if args.csv:
        with open(args.csv, "w") as f:
            f.write("prize,bid,probability\n")
            for i, row in enumerate(rows):
                for j, p in enumerate(row):
                    f.write(f"{i + 1},{j + 1},{p!r}\n")
    if args.markdown:
        print(markdown_opening(rows, opening(gops, args.db, "b")[2]))
    if args.compare:
        m, other, theirs = opening(gops, args.compare)
        if m != n:
            sys.exit(f"error: {args.db} is the {n}-card game, {args.compare} the {m}-card game")
        if args.markdown:
            print(markdown_distances(rows, theirs))
        else:
            print(f"prize,total_variation_{objective}_vs_{other}")
            for i, (p, q) in enumerate(zip(rows, theirs)):
                print(f"{i + 1},{total_variation(p, q):.6f}")
    if not (args.svg or args.csv or args.compare or args.markdown):
        for i, row in enumerate(rows):
            print(i + 1, " ".join(f"{p:.6f}" for p in row))


if __name__ == "__main__":
    main()

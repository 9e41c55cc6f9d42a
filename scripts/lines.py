#!/usr/bin/env python3
"""Non-test lines of Rust per crate, the measure of the house's size: every .rs file but
those under a tests/ directory or named tests.rs, with inline `#[cfg(test)] mod` blocks
(rustfmt'd: up to their closing brace at column 0) left out. Run from the repository root,
or give another checkout's root: `python3 scripts/lines.py [ROOT]`."""
import os, re, sys

def count(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    if lines and lines[-1] == "":
        lines = lines[:-1]
    total, i = 0, 0
    while i < len(lines):
        if lines[i] == "#[cfg(test)]" and i + 1 < len(lines) and re.match(r"(pub(\(crate\))? )?mod \w+ \{", lines[i + 1]):
            # rustfmt'd: the module ends at the first line that is a lone "}"
            j = i + 2
            while lines[j] != "}":
                j += 1
            i = j + 1
            continue
        total += 1
        i += 1
    return total

def crate(root):
    n = 0
    for d, dirs, files in os.walk(root):
        parts = d.split(os.sep)
        if "tests" in parts or "target" in parts:
            continue
        for f in files:
            if f.endswith(".rs") and f != "tests.rs":
                n += count(os.path.join(d, f))
    return n

base = sys.argv[1] if len(sys.argv) > 1 else "."
total4 = 0
for c in ["common", "proto", "db", "coordinator", "worker", "explorer", "arena", "local", "src", "bench", "http", "python"]:
    p = os.path.join(base, c)
    if not os.path.isdir(p):
        continue
    n = crate(p)
    if c in ("db", "coordinator", "local", "src"):
        total4 += n
    print(f"{c:12} {n:6}")
print(f"db+coordinator+local+src {total4}")

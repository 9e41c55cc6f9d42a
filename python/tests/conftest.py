"""Shared pieces of the package's tests: the repository's reference values, the
command line (built by cargo when needed) to compare against, and solved dbs made once
per session."""

import json
import os
import pathlib
import subprocess

import pytest

import gops

REPO = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"


def gops_cli(*args: str) -> str:
    """Runs the command line `gops` (GOPS_BIN, or the release build through cargo)."""
    binary = os.environ.get("GOPS_BIN")
    command = (
        [binary]
        if binary
        else ["cargo", "run", "--release", "--quiet", "--bin", "gops", "--"]
    )
    done = subprocess.run(
        command + list(args), cwd=REPO, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, f"gops {' '.join(args)}: {done.stderr}"
    return done.stdout


def cli_json(*args: str) -> dict:
    return json.loads(gops_cli(*args, "--json"))


def fixture_rows(name: str):
    with open(FIXTURES / name) as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.fixture(scope="session")
def solved(tmp_path_factory):
    """`solved(n, objective)`: the path of that game solved by `gops.solve` (made once,
    closed: open it with `gops.open`, and close it before the command line reads it)."""
    dbs = {}

    def get(n: int, objective: str) -> pathlib.Path:
        if (n, objective) not in dbs:
            path = tmp_path_factory.mktemp(f"{objective}{n}") / "db"
            gops.solve(n, objective, db=path, progress=False).close()
            dbs[n, objective] = path
        return dbs[n, objective]

    return get

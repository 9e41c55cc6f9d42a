"""gops.open / gops.Db: values and strategies against the independent reference values,
layers as Arrow tables against the Parquet export, and errors as Python exceptions."""

import json
import os
import subprocess

import numpy as np
import pyarrow.parquet as pq
import pytest

import gops
from conftest import FIXTURES, cli_json, fixture_rows, gops_cli


@pytest.mark.parametrize(
    "name, n, objective", [("points_n6.jsonl", 6, "points"), ("win_n5.jsonl", 5, "win")]
)
def test_values_match_the_reference(solved, name, n, objective):
    db = gops.open(solved(n, objective))
    rows = fixture_rows(name)
    assert len(rows) == 500
    for row in rows:
        value = db.value(row["a"], row["b"], row["c"], row["d"])
        assert abs(value - row["value"]) <= 1e-9, row


@pytest.mark.parametrize("objective", ["points", "win"])
def test_first_moves_match_the_reference(solved, objective):
    with open(FIXTURES / "first_move.json") as f:
        reference = json.load(f)[objective]
    for n_text, by_upcard in reference.items():
        n = int(n_text)
        db = gops.open(solved(n, objective))
        full = list(range(1, n + 1))
        for upcard_text, expected in by_upcard.items():
            s = db.strategy(full, full, full, int(upcard_text))
            assert list(s.cards_a) == full and list(s.cards_b) == full
            assert s.strategy_a.dtype == np.float64 and s.strategy_a.shape == (n,)
            assert abs(s.strategy_a.sum() - 1) < 1e-12 and abs(s.strategy_b.sum() - 1) < 1e-12
            assert s.gap <= 1e-9
            if expected["unique"]:
                # the reference's probabilities are written to 6 decimals
                assert np.allclose(s.strategy_a, expected["x"], rtol=0, atol=1e-6), (
                    n,
                    upcard_text,
                )
                # the game is symmetric: B's optimal bid is A's
                assert np.allclose(s.strategy_b, expected["x"], rtol=0, atol=1e-6)


def test_strategy_matches_the_command_line(solved):
    path = solved(6, "points")
    cli = json.loads(
        gops_cli(
            "strategy", "--db", str(path), "--a", "1,3,4", "--b", "2,3,6",
            "--prizes", "1,2,5", "--upcard", "5", "--json",
        )
    )
    with gops.open(path) as db:
        s = db.strategy([1, 3, 4], "2,3,6", {1, 2, 5}, upcard=5)
    assert s.value == cli["value"] and s.gap == cli["gap"]
    assert list(s.strategy_a) == cli["strategy_a"]
    assert list(s.strategy_b) == cli["strategy_b"]
    assert list(s.cards_b) == [2, 3, 6]


def test_layers_carry_the_command_lines_checksums(solved):
    path = solved(5, "win")
    status = json.loads(gops_cli("status", "--db", str(path), "--json"))
    db = gops.open(path)
    assert db.complete and db.n == 5 and db.objective == "win"
    assert [l.checksum for l in db.layers] == [l["checksum"] for l in status["layers"]]
    assert [l.k for l in db.layers] == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("objective, layer", [("points", 3), ("win", 4)])
def test_a_layer_as_arrow_is_the_parquet_export(solved, tmp_path, objective, layer):
    path = solved(5, objective)
    out = tmp_path / "layer.parquet"
    gops_cli(
        "export", "--db", str(path), "--format", "parquet",
        "--layers", str(layer), "--out", str(out),
    )
    exported = pq.read_table(out)
    with gops.open(path) as db:
        table = db.to_arrow(layer)
    assert table.schema.equals(exported.schema, check_metadata=True)
    assert table.num_rows == exported.num_rows > 0
    assert table.equals(exported)
    frame = table.to_pandas()
    assert set(frame["k"]) == {layer}


@pytest.mark.parametrize("format", ["csv", "jsonl", "sqlite"])
def test_an_export_file_is_the_command_line_s_file(solved, tmp_path, format):
    path = solved(5, "win")
    cli_out, py_out = tmp_path / f"cli.{format}", tmp_path / f"py.{format}"
    gops_cli(
        "export", "--db", str(path), "--format", format,
        "--layers", "2..4", "--out", str(cli_out),
    )
    with gops.open(path) as db:
        rows = db.export(py_out, format, layers=(2, 4))
        assert rows > 0
        if format != "sqlite":  # SQLite's pages are not byte-stable; csv and jsonl are
            assert py_out.read_bytes() == cli_out.read_bytes()
        else:
            import sqlite3
            query = "SELECT * FROM states ORDER BY rowid"
            assert sqlite3.connect(py_out).execute(query).fetchall() == \
                sqlite3.connect(cli_out).execute(query).fetchall()
        with pytest.raises(FileExistsError, match="overwrite=True"):
            db.export(py_out, format)
        assert db.export(py_out, format, layers=(4, 4), overwrite=True) < rows
        with pytest.raises(ValueError, match="unknown export format"):
            db.export(tmp_path / "x", "xlsx")
        with pytest.raises(ValueError, match="outside"):
            db.export(tmp_path / "x", format, layers=(3, 9))
        assert not (tmp_path / "x").exists() and not (tmp_path / "x.partial").exists()


def test_bad_input_is_a_value_error_and_names_the_problem(solved):
    db = gops.open(solved(5, "win"))
    with pytest.raises(ValueError, match="same size"):
        db.value([1, 2], [1, 2, 3], [1, 2, 3])
    with pytest.raises(ValueError, match="outside 1..=5"):
        db.value([1, 9], [1, 2], [1, 2])
    with pytest.raises(ValueError, match="listed twice"):
        db.value("1,1", [1, 2], [1, 2])
    with pytest.raises(ValueError, match="upcard 4 is not among"):
        db.strategy([1, 2], [1, 2], [1, 2], upcard=4)
    with pytest.raises(ValueError, match="cannot occur"):
        db.value([1, 2], [1, 2], [1, 2], diff=10)
    with pytest.raises(ValueError, match="outside"):
        db.to_arrow(6)
    with pytest.raises(TypeError, match="ints"):
        db.value([1.5], [1], [1])


def test_a_missing_or_foreign_db_and_a_closed_one(tmp_path):
    with pytest.raises(FileNotFoundError, match="no database"):
        gops.open(tmp_path / "nothing")
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "notes.txt").write_text("not a db")
    with pytest.raises(gops.DbError):
        gops.open(junk)
    assert not (junk / "db").exists() and (junk / "notes.txt").read_text() == "not a db"
    with gops.solve(3, db=tmp_path / "p3", progress=False) as db:
        assert db.value([1, 2, 3], [1, 2, 3], [1, 2, 3]) == 0.0
    with pytest.raises(gops.DbError, match="closed"):
        db.value([1], [1], [1])
    # closed: the lock is released and the db opens again
    assert gops.open(tmp_path / "p3").complete


def test_many_readers_read_one_db_at_once_beside_a_server(solved):
    """A finished db holds sealed layers: notebooks, the command line and `gops serve`
    read it at the same time, each answering as a lone reader does, and none changes a
    file of it."""
    path = solved(5, "win")
    def files():
        return {
            p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in path.iterdir() if p.is_file()
        }

    before = files()
    state = ([1, 3, 4], [2, 3, 5], [1, 4, 5], 1)
    alone = cli_json("value", "--db", str(path), "--a", "1,3,4", "--b", "2,3,5",
                     "--prizes", "1,4,5", "--diff", "1")["value"]
    binary = os.environ.get("GOPS_BIN")
    server = None
    if binary:
        server = subprocess.Popen(
            [binary, "serve", "--db", str(path), "--listen", "127.0.0.1:0"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert "explorer" in server.stdout.readline()
    try:
        with gops.open(path) as one, gops.open(path) as two:
            assert one.value(*state) == two.value(*state) == alone
            again = cli_json("value", "--db", str(path), "--a", "1,3,4", "--b", "2,3,5",
                             "--prizes", "1,4,5", "--diff", "1")["value"]
            assert again == alone
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
    assert files() == before

"""gops.solve: the command line's db bit for bit, progress, a clean stop and a resume."""

import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import gops
from conftest import cli_json, gops_cli


def checksums(db: gops.Db):
    return [layer.checksum for layer in db.layers]


@pytest.mark.parametrize("objective", ["points", "win"])
def test_solve_gives_the_command_lines_db_bit_for_bit(tmp_path, objective):
    calls = []
    db = gops.solve(
        7, objective, db=tmp_path / "py", threads=2, progress=lambda *a: calls.append(a)
    )
    gops_cli("solve", "--n", "7", "--objective", objective, "--db", str(tmp_path / "cli"))
    status = cli_json("status", "--db", str(tmp_path / "cli"))
    assert checksums(db) == [l["checksum"] for l in status["layers"]]
    assert len(db.layers) == 7
    # one thread: the same bits
    one = gops.solve(7, objective, db=tmp_path / "one", threads=1, progress=False)
    assert checksums(one) == checksums(db)
    assert [l.max_gap for l in one.layers] == [l.max_gap for l in db.layers]
    assert [l.max_gap for l in db.layers] == [l["max_gap"] for l in status["layers"]]
    # the matrix games of every layer: the same on any thread count, as `status` says
    games = [l.matrix_games for l in db.layers]
    assert games == [l.matrix_games for l in one.layers]
    assert games == [l["matrix_games"] for l in status["layers"]]
    assert all(g is not None for g in games) and sum(games) > 0
    # progress: (done, total, layer), done growing to total
    assert calls, "the progress callback was never called"
    done = [c[0] for c in calls]
    assert done == sorted(done) and calls[-1][0] == calls[-1][1] > 0
    assert all(1 <= c[2] <= 7 for c in calls)


def test_a_failing_callback_stops_the_solve_and_a_second_call_resumes(tmp_path):
    path = tmp_path / "db"

    def stop(done, total, layer):
        if done > 0:
            raise RuntimeError("enough")

    with pytest.raises(RuntimeError, match="enough"):
        gops.solve(8, "win", db=path, threads=1, progress=stop)
    partial = gops.open(path)
    stored = len(partial.layers)
    assert stored < 8
    partial.close()
    db = gops.solve(8, "win", db=path, progress=False)
    assert db.complete
    fresh = gops.solve(8, "win", db=tmp_path / "fresh", progress=False)
    assert checksums(db) == checksums(fresh)


def test_ctrl_c_stores_the_shard_in_hand_and_raises_keyboard_interrupt(tmp_path):
    path = tmp_path / "db"
    script = textwrap.dedent(
        f"""
        import signal, sys, gops
        # Ctrl-C as in a terminal, even where this test runs in the background (a shell
        # without job control starts background commands with SIGINT ignored, and Python
        # keeps it ignored)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        def tell(done, total, layer):
            if done:
                print("solving", flush=True)
        try:
            gops.solve(10, "win", db={str(path)!r}, progress=tell)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(3)
        print("finished", flush=True)
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout.readline().strip() == "solving"
    child.send_signal(signal.SIGINT)
    started = time.monotonic()
    out, _ = child.communicate(timeout=120)
    assert child.returncode == 3, out
    assert "interrupted" in out
    assert time.monotonic() - started < 60
    db = gops.open(path)
    assert db.n == 10 and not db.complete
    db.close()
    # what was solved before the stop is stored
    status = cli_json("status", "--db", str(path))
    assert sum(layer["done"] for layer in status["layers"]) > 0


def test_bad_arguments_are_refused_before_anything_is_written(tmp_path):
    path = tmp_path / "db"
    with pytest.raises(ValueError, match="n must be between 1 and 16"):
        gops.solve(17, db=path)
    with pytest.raises(ValueError, match="objective"):
        gops.solve(5, "score", db=path)
    with pytest.raises(ValueError, match="memory_mb is 1 MiB"):
        gops.solve(5, db=path, memory_mb=1)
    with pytest.raises(ValueError, match="threads"):
        gops.solve(5, db=path, threads=0)
    assert not path.exists()
    gops.solve(4, "points", db=path, progress=False).close()
    with pytest.raises(ValueError, match="holds the 4-card points game"):
        gops.solve(5, "points", db=path, progress=False)
    assert gops.open(path).complete


def test_the_default_progress_is_a_tqdm_bar(tmp_path, capsys):
    pytest.importorskip("tqdm")
    db = gops.solve(6, "win", db=tmp_path / "db")
    err = capsys.readouterr().err
    assert "games" in err and "layer 6" in err, err
    gops.exploitability(db, "random")
    assert "states" in capsys.readouterr().err

"""The players' side: gops.respond against the command line's `gops respond`, gops.fit
recovering a known mixture, and named agents (the safe exploiter and the best response
included) in gops.arena.evaluate and as callables for a gops.env loop."""

import json

import pytest

import gops
import gops.arena
from conftest import cli_json, gops_cli


def test_respond_matches_the_command_line(solved):
    path = solved(6, "points")
    cli = cli_json("respond", "--db", str(path), "--opponent", "0.6*upcard+0.4*uniform")
    db = gops.open(path)
    mine = gops.respond(db, "0.6*upcard+0.4*uniform")
    for key in ("value", "best_response", "equilibrium", "exploitability", "states"):
        assert mine[key] == cli[key], key
    # the bid-the-upcard friend loses every prize but the top one: 1+...+5 - 6 = 9
    assert gops.respond(db, "upcard")["best_response"] == 9.0
    later = gops.respond(db, "upcard", a=[1, 2, 3], b=[4, 5, 6], prizes=[4, 5, 6], diff=2)
    assert later["prizes"] == [4, 5, 6] and later["best_response"] <= later["value"] + 15
    with pytest.raises(ValueError, match="unknown agent"):
        gops.respond(db, "bluff")


def test_fit_recovers_a_known_mixture(solved, tmp_path):
    path = solved(6, "points")
    games = tmp_path / "games.jsonl"
    gops_cli(
        "simulate", "--db", str(path), "--a", "uniform", "--b", "0.7*upcard+0.3*uniform",
        "--games", "300", "--seed", "4", "--record", str(games),
    )
    fitted = gops.fit(games)
    assert abs(fitted["weights"]["upcard"] - 0.7) <= 0.1, fitted
    assert abs(fitted["weights"]["uniform"] - 0.3) <= 0.1, fitted
    records = [json.loads(line) for line in games.read_text().splitlines()]
    assert gops.fit(records) == fitted
    records[1]["bid"] = 99
    with pytest.raises(ValueError, match="record 2"):
        gops.fit(records)


def test_named_agents_play_in_the_arena_and_answer_requests(solved):
    db = gops.open(solved(5, "points"))
    safe = gops.arena.evaluate("exploit:upcard", db, games=400, seed=3)
    low, high = safe.summary["loss_ci95"]
    assert low - 1e-9 <= 0.0 <= high + 1e-9, safe.summary
    best = gops.arena.evaluate("respond:upcard", db, games=50, seed=3)
    assert best.summary["games"] == 50
    agent = gops.Agent(db, "exploit:match")
    assert agent.name == "exploit:upcard"
    request = {
        "game": 0, "round": 1, "n": 5, "objective": "points", "seat": "A",
        "hand": [1, 2, 3, 4, 5], "opponent_hand": [1, 2, 3, 4, 5],
        "prizes": [1, 2, 3, 4, 5], "upcard": 3, "diff": 0, "history": [],
    }
    mix = json.loads(agent.decide(json.dumps(request)))
    assert abs(sum(mix.values()) - 1.0) <= 1e-9 and set(mix) == {"1", "2", "3", "4", "5"}
    with pytest.raises(ValueError, match="unknown agent"):
        gops.Agent(db, "bluff")

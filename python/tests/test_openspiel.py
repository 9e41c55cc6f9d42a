"""gops.openspiel: the db's equilibrium as an OpenSpiel policy (NashConv by OpenSpiel's
own best response), states both ways, and OpenSpiel policies measured by
gops.exploitability."""

import concurrent.futures
import multiprocessing
import os
import random

import pytest

if os.environ.get("GOPS_REQUIRE_OPENSPIEL") == "1":
    import pyspiel  # CI: a missing open_spiel is a failure
else:
    pyspiel = pytest.importorskip("pyspiel", reason="open_spiel is not installed")

import gops  # noqa: E402
import gops.openspiel as gos  # noqa: E402
from conftest import cli_json  # noqa: E402
from open_spiel.python import policy as os_policy  # noqa: E402
from open_spiel.python.algorithms import exploitability as os_exploitability  # noqa: E402


def nash_conv(n: int, objective: str, path: str) -> float:
    """OpenSpiel's NashConv of the policy of a freshly solved db (a process of its own:
    the N = 5 walks take minutes each and run side by side)."""
    db = gops.solve(n, objective, db=path, progress=False)
    policy = gos.policy(db)
    return os_exploitability.nash_conv(
        policy.game, policy, return_only_nash_conv=True, use_cpp_br=False
    )


def test_the_policy_is_a_nash_equilibrium_in_openspiel(tmp_path):
    cases = [(n, objective) for n in (4, 5) for objective in ("points", "win")]
    spawn = multiprocessing.get_context("spawn")  # no fork of a process with threads
    with concurrent.futures.ProcessPoolExecutor(max_workers=2, mp_context=spawn) as pool:
        futures = {
            case: pool.submit(nash_conv, *case, str(tmp_path / f"{case[1]}{case[0]}"))
            for case in cases
        }
        results = {case: f.result() for case, f in futures.items()}
    for case, value in results.items():
        assert 0 <= value <= 1e-9, (case, value)


def test_the_uniform_policy_is_far_from_equilibrium(solved):
    """The same NashConv call tells a bad policy apart (it is not vacuous)."""
    db = gops.open(solved(4, "points"))
    game = gos.game_for(db)
    value = os_exploitability.nash_conv(
        game, os_policy.UniformRandomPolicy(game), use_cpp_br=False
    )
    assert value > 1


def random_play(game, rng):
    """Every state of one random play of ``game``, to the end."""
    state = game.new_initial_state()
    states = [state.clone()]
    while not state.is_terminal():
        if state.is_chance_node():
            actions = [a for a, _ in state.chance_outcomes()]
            state.apply_action(rng.choice(actions))
        else:
            state.apply_actions([rng.choice(state.legal_actions(p)) for p in (0, 1)])
        states.append(state.clone())
    return states


@pytest.mark.parametrize("n", [4, 6, 7])
def test_states_both_ways(n):
    game = pyspiel.load_game(
        "goofspiel", {"num_cards": n, "points_order": "random", "returns_type": "win_loss"}
    )
    rng = random.Random(n)
    for _ in range(30):
        for state in random_play(game, rng):
            for player in (0, 1):
                seen = gos.state(state, player)
                if state.is_terminal():
                    assert seen.a == [] and seen.prizes == []
                    continue
                assert seen.a == sorted(a + 1 for a in state.legal_actions(player)) or (
                    state.is_chance_node()
                )
                other = gos.state(state, 1 - player)
                assert seen.a == other.b and seen.b == other.a and seen.diff == -other.diff
            if state.is_terminal() or len(gos.state(state).a) < 2:
                continue
            seen, turned = gos.state(state), gos.upcard(state)
            assert (turned is None) == state.is_chance_node()
            rebuilt = gos.to_openspiel(game, seen.a, seen.b, seen.prizes, seen.diff, turned)
            assert gos.state(rebuilt) == seen and gos.upcard(rebuilt) == turned
            assert rebuilt.is_chance_node() == state.is_chance_node()
            if turned is not None:
                # the observation OpenSpiel prints agrees with ours
                text = rebuilt.observation_string(0)
                assert f"Current point card: {turned}" in text
                assert f"P0 hand: {' '.join(map(str, seen.a))} " in text


def test_states_no_play_reaches_are_refused():
    game = pyspiel.load_game("goofspiel", {"num_cards": 5, "points_order": "random"})
    # 3, 4, 5 played: no signed sum of them is 10
    with pytest.raises(ValueError, match="no play"):
        gos.to_openspiel(game, [1, 2], [1, 2], [1, 2], diff=10)
    with pytest.raises(ValueError, match="last round"):
        gos.to_openspiel(game, [1], [2], [3])
    with pytest.raises(ValueError, match="not among"):
        gos.to_openspiel(game, [1, 2], [1, 2], [1, 2], upcard=5)


def test_a_game_other_than_the_dbs_is_refused(solved):
    db = gops.open(solved(4, "points"))
    for params in (
        {"num_cards": 5},
        {"num_cards": 4, "returns_type": "win_loss"},
        {"num_cards": 4, "points_order": "descending", "returns_type": "point_difference"},
        {"num_cards": 4, "imp_info": True, "returns_type": "point_difference"},
    ):
        with pytest.raises(ValueError, match="goofspiel with"):
            gos.policy(db, pyspiel.load_game("goofspiel", params))


@pytest.mark.parametrize("n, objective", [(5, "points"), (5, "win")])
def test_openspiel_policies_measured_by_gops(solved, n, objective):
    path = solved(n, objective)
    cli = cli_json("exploit", "--db", str(path), "--policy", "random")
    db = gops.open(path)
    game = gos.game_for(db)
    uniform = gops.exploitability(db, os_policy.UniformRandomPolicy(game), progress=False)
    assert abs(uniform.exploitability - cli["exploitability"]) <= 1e-12
    # the db's own policy, through OpenSpiel states and back
    equilibrium = gops.exploitability(db, gos.policy(db), progress=False)
    assert abs(equilibrium.exploitability) <= 1e-12

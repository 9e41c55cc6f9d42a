"""gops.arena and gops.env: a Python agent against the equilibrium, each decision's exact
loss; the arena's numbers against `gops arena --json` for the same seed; faults; the
OpenSpiel policy of the db losing nothing; the Gymnasium environment through
gymnasium's own checker, its dense rewards summing to minus the game's loss."""

import json
import os

import pytest

import gops
import gops.arena
from conftest import gops_cli


def uniform(request):
    p = 1.0 / len(request["hand"])
    return {c: p for c in request["hand"]}


def nearest_upcard(request):
    return min(request["hand"], key=lambda c: (abs(c - request["upcard"]), c))


def test_an_agent_is_measured_as_the_command_line_measures_the_same_rule(solved):
    path = solved(5, "win")
    with gops.open(path) as db:
        ev = gops.arena.evaluate(nearest_upcard, db, games=400, seed=3)
    s = ev.summary
    assert s["games"] == 400 and s["bot_faults"] == 0
    assert len(ev.decisions) == 400 * 5
    assert abs(ev.decisions.groupby("game")["loss"].sum().mean() - s["mean_loss"]) < 1e-12
    # the built-in rule of the command line is the same rule, so the same games
    cli = json.loads(
        gops_cli("arena", "--db", str(path), "--builtin", "upcard", "--games", "400",
                 "--seed", "3", "--threads", "2", "--json").splitlines()[-1]
    )
    for key in ["mean_result", "mean_loss", "wins", "draws", "losses", "result_ci95", "loss_ci95"]:
        assert s[key] == cli[key], key


def test_the_loss_is_positive_for_a_rule_and_zero_for_the_equilibrium(solved):
    with gops.open(solved(5, "points")) as db:
        rule = gops.arena.evaluate(uniform, db, games=300, seed=1).summary
        assert rule["mean_loss"] > 0.1

        def equilibrium(request):
            own, other = request["hand"], request["opponent_hand"]
            a, b = (own, other) if request["seat"] == "A" else (other, own)
            s = db.strategy(a, b, request["prizes"], request["upcard"])
            cards, p = (s.cards_a, s.strategy_a) if request["seat"] == "A" else (s.cards_b, s.strategy_b)
            return {int(c): float(q) for c, q in zip(cards, p)}

        best = gops.arena.evaluate(equilibrium, db, games=300, seed=1)
        assert best.decisions["loss"].abs().max() < 1e-9
        assert best.summary["bot_faults"] == 0


def test_a_wrong_answer_forfeits_and_an_exception_is_raised(solved):
    with gops.open(solved(4, "points")) as db:
        bad = gops.arena.evaluate(lambda r: 99, db, games=10, seed=2).summary
        assert bad["bot_faults"] == 10 and bad["faults_by_kind"] == {"illegal": 10}
        # a forfeit at the first decision loses every prize: -(1+2+3+4) = -10
        assert bad["mean_result"] == -10

        def broken(request):
            raise RuntimeError("the agent broke")

        with pytest.raises(RuntimeError, match="the agent broke"):
            gops.arena.evaluate(broken, db, games=3, seed=2)


def installed(module: str, required_by: str) -> bool:
    """Whether `module` imports; a missing one fails instead where CI requires it."""
    try:
        __import__(module)
        return True
    except ImportError:
        assert os.environ.get(required_by) != "1", f"{module} is required ({required_by}=1)"
        return False


have_openspiel = installed("pyspiel", "GOPS_REQUIRE_OPENSPIEL")
have_gymnasium = installed("gymnasium", "GOPS_REQUIRE_GYMNASIUM")


@pytest.mark.skipif(not have_openspiel, reason="open_spiel is not installed")
@pytest.mark.parametrize("objective", ["points", "win"])
def test_the_dbs_openspiel_policy_loses_nothing_and_a_uniform_one_does(solved, objective):
    import gops.openspiel as gos
    from open_spiel.python import policy as os_policy

    with gops.open(solved(5, objective)) as db:
        ev = gops.arena.evaluate(gos.policy(db), db, games=200, seed=4)
        assert ev.summary["bot_faults"] == 0
        assert ev.decisions["loss"].abs().max() < 1e-9
        uniform_policy = os_policy.UniformRandomPolicy(gos.game_for(db))
        worse = gops.arena.evaluate(uniform_policy, db, games=200, seed=4).summary
        assert worse["bot_faults"] == 0 and worse["mean_loss"] > 0.01


@pytest.mark.skipif(not have_openspiel, reason="open_spiel is not installed")
def test_an_openspiel_mcts_bot_plays_as_player_0_of_the_turn_based_game(solved):
    import numpy as np
    from open_spiel.python.algorithms import mcts

    with gops.open(solved(4, "points")) as db:
        game = gops.arena.turn_based_game(db)
        evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(1))
        bot = mcts.MCTSBot(game, 2.0, 200, evaluator, random_state=np.random.RandomState(2))
        ev = gops.arena.evaluate(bot, db, games=30, seed=6)
        assert ev.summary["bot_faults"] == 0
        assert len(ev.decisions) == 30 * 4
        # every bid a card of the hand, the last round's forced
        for _, d in ev.decisions.iterrows():
            assert d["bid"] in d["hand"]
        assert ev.summary["mean_loss"] >= -1e-12


@pytest.mark.skipif(not have_gymnasium, reason="gymnasium is not installed")
@pytest.mark.parametrize("objective", ["points", "win"])
def test_the_environment_passes_gymnasiums_checker_and_its_dense_rewards_are_the_loss(solved, objective):
    from gymnasium.utils.env_checker import check_env

    import gops.env

    with gops.open(solved(5, objective)) as db:
        check_env(gops.env.GopsEnv(db, seat="alternate"), skip_render_check=True)
        env = gops.env.GopsEnv(db, seat="alternate", dense=True)
        for game in range(20):
            obs, info = env.reset(seed=100 + game)
            total, losses, done = 0.0, 0.0, False
            while not done:
                legal = [i for i, m in enumerate(info["action_mask"]) if m]
                obs, reward, done, truncated, step_info = env.step(legal[game % len(legal)])
                total += reward
                losses += step_info["decision"]["loss"]
                if not done:
                    info = step_info
            assert total == pytest.approx(-losses, abs=1e-12)
            if objective == "win":
                assert step_info["result"] in (-1.0, 0.0, 1.0)
        # sparse: the reward is the result at the end, and an illegal card forfeits
        env = gops.env.GopsEnv(db)
        obs, info = env.reset(seed=1)
        assert all(info["action_mask"])  # the start: every card is legal
        obs, reward, done, _, step_info = env.step(0)
        assert reward == 0.0 and not done
        illegal = next(i for i, m in enumerate(step_info["action_mask"]) if not m)
        obs, reward, done, _, step_info = env.step(illegal)
        assert done and step_info["decision"]["fault"] is not None
        assert reward == step_info["result"]

"""An agent against the equilibrium, with every decision's exact loss (the engine of
``gops arena``; the protocol is docs/reference/bot-protocol.md).

:func:`evaluate` plays ``games`` games of ``agent`` against the equilibrium of ``db``
(a full db or a book), the agent's seat alternating (A in even games). The agent is one
of:

* a callable ``agent(request) -> answer``: ``request`` is the protocol's request as a
  dict (``n``, ``objective``, ``seat``, ``hand``, ``opponent_hand``, ``prizes``,
  ``upcard``, ``diff``, ``history``, ...); the answer is a card (an int), a mapping
  ``{card: probability}``, or the protocol's reply (``{"bid": c}`` or
  ``{"distribution": {...}}``);
* an OpenSpiel policy of OpenSpiel's goofspiel (``action_probabilities``), asked at the
  OpenSpiel state the game's history leads to (see :mod:`gops.openspiel`);
* an OpenSpiel bot (``step``) of :func:`turn_based_game` ``(db)``, asked at that state
  of the game made turn-based, as player 0, who moves first, so that it never sees the
  opponent's bid.

An answer that is not a distribution over the agent's hand forfeits the game, as a bot's
would; an exception raised by the agent is raised again once the run ends.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, NamedTuple, Optional

from . import _gops
from ._gops import Db


class Evaluation(NamedTuple):
    """What :func:`evaluate` gives: the summary (the keys of ``gops arena --json``'s last
    line: ``mean_result``, ``result_ci95``, ``mean_loss``, ``loss_ci95``, ``bot_faults``,
    ``loss_by_round``, ``worst_decisions``, ...) and one row per decision."""

    summary: Dict[str, Any]
    decisions: Any


def _reply(answer) -> Dict[str, Any]:
    """The protocol's reply for an agent's answer."""
    if isinstance(answer, dict):
        if "bid" in answer or "distribution" in answer:
            return answer
        return {"distribution": {str(int(c)): float(p) for c, p in answer.items()}}
    if isinstance(answer, bool):
        raise TypeError("an answer is a card, a mapping or a reply, not a bool")
    return {"bid": int(answer)}


def _history_state(game, request, first: int):
    """The OpenSpiel state of ``game`` (goofspiel, random deck) that the request's
    history leads to, the upcard dealt, with the agent as player ``first``."""
    os_state = game.new_initial_state()
    for r in request["history"]:
        os_state.apply_action(r["prize"] - 1)
        own, other = r["bid"] - 1, r["opponent_bid"] - 1
        os_state.apply_actions([own, other] if first == 0 else [other, own])
    os_state.apply_action(request["upcard"] - 1)
    return os_state


def _policy_agent(os_policy, db: Db) -> Callable[[dict], Any]:
    from .openspiel import _check_game

    game = os_policy.game
    _check_game(game, db)

    def agent(request):
        if len(request["hand"]) == 1:
            return request["hand"][0]
        player = 0 if request["seat"] == "A" else 1
        os_state = _history_state(game, request, player)
        probabilities = os_policy.action_probabilities(os_state, player)
        return {action + 1: p for action, p in probabilities.items()}

    return agent


def turn_based_game(db: Db):
    """OpenSpiel's goofspiel of ``db`` made turn-based (player 0 bids first, player 1 does
    not see it): the game to make an OpenSpiel bot for (MCTS, say) that
    :func:`evaluate` asks as player 0."""
    import pyspiel

    from .openspiel import game_for

    return pyspiel.convert_to_turn_based(game_for(db))


def _bot_agent(os_bot, db: Db) -> Callable[[dict], Any]:
    turn_based = turn_based_game(db)

    def agent(request):
        if len(request["hand"]) == 1:
            return request["hand"][0]
        # the agent as player 0, who moves first in the turn-based game: it never sees
        # the opponent's bid of the round
        os_state = turn_based.new_initial_state()
        for r in request["history"]:
            os_state.apply_action(r["prize"] - 1)
            os_state.apply_action(r["bid"] - 1)
            os_state.apply_action(r["opponent_bid"] - 1)
        os_state.apply_action(request["upcard"] - 1)
        return os_bot.step(os_state) + 1

    return agent


def _named_agent(name: str, db: Db) -> Callable[[dict], Any]:
    """An agent of the vocabulary by name (``"upcard"``, ``"exploit:upcard"``,
    ``"respond:upcard"``, a mixture, ...), played by the library."""
    native = _gops.Agent(db, name)

    def agent(request):
        return {int(c): p for c, p in json.loads(native.decide(json.dumps(request))).items()}

    agent.name = native.name
    return agent


def agent_of(agent, db: Db) -> Callable[[dict], Any]:
    """A callable agent for ``agent`` (a callable, an OpenSpiel policy or bot, or the
    name of an agent of the vocabulary)."""
    if isinstance(agent, str):
        return _named_agent(agent, db)
    if hasattr(agent, "action_probabilities"):
        return _policy_agent(agent, db)
    if hasattr(agent, "step"):
        return _bot_agent(agent, db)
    if callable(agent):
        return agent
    raise TypeError(
        "agent must be a callable, an OpenSpiel policy (action_probabilities), an "
        f"OpenSpiel bot (step) or an agent's name, not {type(agent).__name__}"
    )


def evaluate(
    agent,
    db: Db,
    games: int = 1000,
    seed: Optional[int] = None,
    progress: Any = None,
) -> Evaluation:
    """Plays ``games`` games of ``agent`` against ``db``'s equilibrium (seed ``seed``,
    from the clock if None) and measures each decision's exact loss. ``progress``: True
    for a tqdm bar, or a callable ``progress(games_done)``. Returns an
    :class:`Evaluation`; ``decisions`` is a pandas DataFrame (pandas needed)."""
    import random

    play = agent_of(agent, db)
    if seed is None:
        seed = random.SystemRandom().getrandbits(63)

    def decide(line: str) -> str:
        return json.dumps(_reply(play(json.loads(line))))

    bar = None
    callback = progress if callable(progress) else None
    if progress is True:
        from tqdm.auto import tqdm

        bar = tqdm(total=games, desc="games", unit="game")
        callback = lambda done: bar.update(done - bar.n)  # noqa: E731
    try:
        summary, records = _gops.arena_run(db, decide, int(games), int(seed), callback)
    finally:
        if bar is not None:
            bar.close()
    import pandas

    return Evaluation(json.loads(summary), pandas.DataFrame([json.loads(r) for r in records]))

"""OpenSpiel's ``goofspiel`` and the gops strategy db, both ways.

* :func:`policy` gives an OpenSpiel policy that plays the db's equilibrium, for
  ``goofspiel`` with ``points_order="random"`` (the game gops solves), ``imp_info=False``
  (both hands are public, as in gops), and ``returns_type`` ``"point_difference"`` for a
  ``points`` db or ``"win_loss"`` for a ``win`` db.
* :func:`state` reads an OpenSpiel state as the gops state ``(a, b, prizes, diff)``;
  :func:`upcard` gives its turned-up prize; :func:`to_openspiel` builds an OpenSpiel
  state for a gops state.

OpenSpiel's conventions, handled here: actions are 0-based (action ``c`` bids card
``c + 1``, chance outcome ``c`` deals prize ``c + 1``); a tied bid discards the prize;
the last round (one card left) is played by OpenSpiel itself; ``point_difference``
returns half the score difference. Needs ``open_spiel`` (``pip install open_spiel``;
version 2.0 needs Python >= 3.11).
"""

from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Optional, Sequence

from ._gops import Db

RETURNS_TYPE = {"points": "point_difference", "win": "win_loss"}


class GopsState(NamedTuple):
    """A state as gops names it, seen by one player (A): A's hand, B's hand, the prizes
    not yet won (the turned-up prize among them) and A's score minus B's."""

    a: List[int]
    b: List[int]
    prizes: List[int]
    diff: int


class _Replay(NamedTuple):
    hands: List[List[int]]
    dealt: List[int]
    points: List[int]
    rounds_done: int


def _params(game) -> Dict[str, Any]:
    return game.get_parameters()


def _replay(os_state, n: int, order: str) -> _Replay:
    """Both hands, the prizes dealt (the upcard last if turned up), each player's points
    and the rounds played, from the history of a state of the ``n``-card game with
    deck order ``order``."""
    hands = [list(range(1, n + 1)), list(range(1, n + 1))]
    dealt: List[int] = []
    points = [0, 0]
    bids: List[int] = []
    rounds = 0
    for entry in os_state.full_history():
        if entry.player == -1:
            dealt.append(entry.action + 1)
            continue
        bids.append(entry.action + 1)
        if len(bids) < 2:
            continue
        if order != "random":
            dealt.append(n - rounds if order == "descending" else rounds + 1)
        prize = dealt[rounds]
        for player, card in enumerate(bids):
            hands[player].remove(card)
        if bids[0] != bids[1]:
            points[0 if bids[0] > bids[1] else 1] += prize
        bids = []
        rounds += 1
    if order != "random" and not os_state.is_terminal() and len(dealt) == rounds:
        dealt.append(n - rounds if order == "descending" else rounds + 1)
    return _Replay(hands, dealt, points, rounds)


def state(os_state, player: int = 0) -> GopsState:
    """The gops state of an OpenSpiel goofspiel state, seen by ``player`` (who is A).

    At a chance node (before the next prize is dealt) ``prizes`` are the prizes not yet
    dealt; at a decision node they include the turned-up prize (:func:`upcard`).
    A terminal state gives empty hands.
    """
    params = _params(os_state.get_game())
    n = params["num_cards"]
    replay = _replay(os_state, n, params.get("points_order", "random"))
    return _seen(replay, n, player, os_state.is_terminal())


def _seen(replay: _Replay, n: int, player: int, terminal: bool) -> GopsState:
    if terminal:
        return GopsState([], [], [], replay.points[player] - replay.points[1 - player])
    won = set(replay.dealt[: replay.rounds_done])
    prizes = [c for c in range(1, n + 1) if c not in won]
    return GopsState(
        sorted(replay.hands[player]),
        sorted(replay.hands[1 - player]),
        prizes,
        replay.points[player] - replay.points[1 - player],
    )


def upcard(os_state) -> Optional[int]:
    """The turned-up prize of a decision node, or None (chance node, terminal)."""
    if os_state.is_terminal() or os_state.is_chance_node():
        return None
    params = _params(os_state.get_game())
    replay = _replay(os_state, params["num_cards"], params.get("points_order", "random"))
    return replay.dealt[replay.rounds_done]


def _rounds_to(
    played_a: Sequence[int], played_b: Sequence[int], won: Sequence[int], diff: int
) -> Optional[List[tuple]]:
    """Rounds (prize, A's card, B's card) that play exactly these cards and these
    prizes and leave A ``diff`` ahead, or None where there are none."""
    prizes = sorted(won, reverse=True)
    failed = set()

    def search(i: int, left_a: frozenset, left_b: frozenset, need: int):
        if i == len(prizes):
            return [] if need == 0 else None
        if abs(need) > sum(prizes[i:]):
            return None
        key = (left_a, left_b, need)
        if key in failed:
            return None
        prize = prizes[i]
        for x in sorted(left_a):
            for y in sorted(left_b):
                gain = prize if x > y else -prize if x < y else 0
                rest = search(i + 1, left_a - {x}, left_b - {y}, need - gain)
                if rest is not None:
                    return [(prize, x, y)] + rest
        failed.add(key)
        return None

    return search(0, frozenset(played_a), frozenset(played_b), diff)


def to_openspiel(game, a, b, prizes, diff: int = 0, upcard: Optional[int] = None):
    """An OpenSpiel state of ``game`` (goofspiel, random deck) where player 0 holds
    ``a``, player 1 holds ``b``, ``prizes`` are left (with ``upcard`` among them, turned
    up, if given) and player 0 leads by ``diff`` points. Raises ``ValueError`` where no
    play reaches it, and for one card left (OpenSpiel plays that round by itself)."""
    params = _params(game)
    n = params["num_cards"]
    if params.get("points_order", "random") != "random":
        raise ValueError("to_openspiel needs points_order='random'")
    a, b, prizes = sorted(set(a)), sorted(set(b)), sorted(set(prizes))
    full = set(range(1, n + 1))
    if not (len(a) == len(b) == len(prizes)) or not set(a) | set(b) | set(prizes) <= full:
        raise ValueError(
            f"a, b and prizes must be cards of 1..{n} of the same size: {a}, {b}, {prizes}"
        )
    if len(a) == 1:
        raise ValueError("OpenSpiel plays the last round (one card left) by itself")
    if upcard is not None and upcard not in prizes:
        raise ValueError(f"upcard {upcard} is not among the prizes {prizes}")
    rounds = _rounds_to(
        sorted(full - set(a)), sorted(full - set(b)), sorted(full - set(prizes)), diff
    )
    if rounds is None:
        raise ValueError(
            f"no play of the {n}-card game leaves a={a}, b={b}, prizes={prizes} "
            f"with player 0 ahead by {diff}"
        )
    os_state = game.new_initial_state()
    for prize, x, y in rounds:
        os_state.apply_action(prize - 1)
        os_state.apply_actions([x - 1, y - 1])
    if upcard is not None:
        os_state.apply_action(upcard - 1)
    return os_state


def _check_game(game, db: Db) -> None:
    params = _params(game)
    wanted = {
        "num_cards": db.n,
        "points_order": "random",
        "returns_type": RETURNS_TYPE[db.objective],
        "imp_info": False,
        "players": 2,
    }
    wrong = {k: params.get(k) for k, v in wanted.items() if params.get(k, v) != v}
    turns = params.get("num_turns", -1)
    if turns not in (-1, db.n):
        wrong["num_turns"] = turns
    if game.get_type().short_name != "goofspiel" or wrong:
        raise ValueError(
            f"the db holds the {db.n}-card {db.objective} game, which is OpenSpiel's "
            f"goofspiel with {wanted}; this game has {wrong or game.get_type().short_name}"
        )


def game_for(db: Db):
    """OpenSpiel's goofspiel game that ``db`` solves."""
    import pyspiel

    return pyspiel.load_game(
        "goofspiel",
        {
            "num_cards": db.n,
            "points_order": "random",
            "returns_type": RETURNS_TYPE[db.objective],
            "imp_info": False,
        },
    )


def policy(db: Db, game=None):
    """An OpenSpiel ``policy.Policy`` for both players of ``game`` (by default
    :func:`game_for` ``(db)``) that plays the db's equilibrium: at each decision node
    the optimal mixed bid of the game after the upcard, read from the db."""
    from open_spiel.python import policy as os_policy

    if game is None:
        game = game_for(db)
    _check_game(game, db)

    class GopsPolicy(os_policy.Policy):
        """The equilibrium of a gops db as an OpenSpiel policy."""

        def __init__(self) -> None:
            super().__init__(game, [0, 1])
            self.db = db
            # by (player, history), then by the gops state it decodes to
            self._by_history: Dict[tuple, Dict[int, float]] = {}
            self._by_state: Dict[tuple, Dict[int, float]] = {}

        def action_probabilities(self, os_state, player_id=None):
            if player_id is None:
                if os_state.is_simultaneous_node():
                    raise ValueError("at a simultaneous node, say which player_id")
                player_id = os_state.current_player()
            key = (player_id, tuple(os_state.history()))
            found = self._by_history.get(key)
            if found is None:
                found = self._by_history[key] = self._decide(os_state, player_id)
            return dict(found)

        def _decide(self, os_state, player_id) -> Dict[int, float]:
            if os_state.is_terminal() or os_state.is_chance_node():
                raise ValueError("no decision here: a chance or terminal node")
            replay = _replay(os_state, db.n, "random")
            seen = _seen(replay, db.n, player_id, False)
            turned = replay.dealt[replay.rounds_done]
            diff = seen.diff if db.objective == "win" else 0
            key = (tuple(seen.a), tuple(seen.b), tuple(seen.prizes), turned, diff)
            if key not in self._by_state:
                s = db.strategy(seen.a, seen.b, seen.prizes, turned, diff)
                self._by_state[key] = {
                    int(card) - 1: float(p) for card, p in zip(s.cards_a, s.strategy_a)
                }
            return self._by_state[key]

    return GopsPolicy()


def agent_of_policy(os_policy, db: Db):
    """An agent for :func:`gops.exploitability`: OpenSpiel policy ``os_policy`` asked
    as player 0 at an OpenSpiel state built for each gops state."""
    game = os_policy.game
    _check_game(game, db)

    def agent(a, b, prizes, turned, diff):
        if len(a) == 1:
            return [1.0]
        os_state = to_openspiel(game, a, b, prizes, diff, turned)
        probabilities = os_policy.action_probabilities(os_state, 0)
        return {action + 1: p for action, p in probabilities.items()}

    return agent

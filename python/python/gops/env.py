"""A Gymnasium environment: one agent against the equilibrium of a gops db.

``GopsEnv(db)`` is a game of the db's N cards, the agent in seat A (or B, or alternating
from game to game). Each step is one round: the observation shows the agent's hand, the
opponent's, the prizes left, the upcard turned up and the score difference (the
agent's minus the opponent's); the action is the card to bid, ``card - 1``. The
opponent plays the equilibrium, drawn from the game's seed. The reward is the game's
result at its end (``win``: 1, 0 or -1; ``points``: the score difference), 0 before.
With ``dense=True`` it is instead minus each decision's exact loss at every step
(:mod:`gops.arena`): over a game the rewards sum to minus its summed loss, whose
expectation is the game's value less the agent's expected result; the result is then in
``info["result"]`` at the end. A card not in the hand forfeits the game (the opponent takes every prize
left), as in the arena; ``info["action_mask"]`` marks the legal cards.

Needs ``gymnasium`` (``pip install gymnasium``).
"""

from __future__ import annotations

import json
from typing import Any, Dict, Optional

import numpy as np

from . import _gops
from ._gops import Db

try:
    import gymnasium as gym
    from gymnasium import spaces
except ImportError as e:  # pragma: no cover - the message is the point
    raise ImportError("gops.env needs gymnasium: pip install gymnasium") from e


class GopsEnv(gym.Env):
    """One agent against the equilibrium of ``db``; ``seat`` "A", "B" or "alternate";
    ``dense``: minus each decision's exact loss as a reward at every step."""

    metadata = {"render_modes": []}

    def __init__(self, db: Db, seat: str = "A", dense: bool = False):
        if seat not in ("A", "B", "alternate"):
            raise ValueError(f'seat must be "A", "B" or "alternate", not {seat!r}')
        self.db, self.seat, self.dense = db, seat, dense
        n = db.n
        total = n * (n + 1) // 2
        self.observation_space = spaces.Dict(
            {
                "hand": spaces.MultiBinary(n),
                "opponent_hand": spaces.MultiBinary(n),
                "prizes": spaces.MultiBinary(n),
                "upcard": spaces.Discrete(n, start=1),
                "diff": spaces.Box(-total, total, shape=(1,), dtype=np.int64),
            }
        )
        self.action_space = spaces.Discrete(n)
        self._games = 0
        self._seed = 0
        self._game = None
        self._request: Optional[Dict[str, Any]] = None

    def _cards(self, cards) -> np.ndarray:
        mask = np.zeros(self.db.n, dtype=np.int8)
        mask[[c - 1 for c in cards]] = 1
        return mask

    def _observe(self) -> Dict[str, Any]:
        r = self._request
        return {
            "hand": self._cards(r["hand"]),
            "opponent_hand": self._cards(r["opponent_hand"]),
            "prizes": self._cards(r["prizes"]),
            "upcard": int(r["upcard"]),
            "diff": np.array([r["diff"]], dtype=np.int64),
        }

    def _info(self) -> Dict[str, Any]:
        r = self._request
        return {"action_mask": self._cards(r["hand"]), "request": r}

    def reset(self, *, seed: Optional[int] = None, options=None):
        super().reset(seed=seed)
        if seed is not None:
            self._seed, self._games = int(seed), 0
        elif self._game is None:
            self._seed = int(self.np_random.integers(0, 2**63 - 1))
        seat = self.seat
        if seat == "alternate":
            seat = "A" if self._games % 2 == 0 else "B"
        self._game = _gops.ArenaGame(self.db, self._seed, self._games, seat)
        self._games += 1
        self._request = json.loads(self._game.request())
        return self._observe(), self._info()

    def step(self, action):
        if self._game is None or self._request is None:
            raise RuntimeError("call reset() before step()")
        decision = json.loads(self._game.answer(json.dumps({"bid": int(action) + 1})))
        reward = -decision["loss"] if self.dense else 0.0
        info: Dict[str, Any] = {"decision": decision}
        asked = self._game.request()
        if asked is None:
            result = float(self._game.result())
            info["result"] = result
            if not self.dense:
                reward = result
            observation = self._observe()
            self._request = None
            return observation, reward, True, False, info
        self._request = json.loads(asked)
        info.update(self._info())
        return self._observe(), reward, False, False, info

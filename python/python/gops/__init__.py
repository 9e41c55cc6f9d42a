"""Exact Goofspiel (GOPS) from Python: solve a game, read its strategy database, measure
any agent's exploitability exactly, and use the equilibrium in OpenSpiel
(:mod:`gops.openspiel`).

    import gops
    db = gops.solve(8, objective="win", db="w8")
    db.value(range(1, 9), range(1, 9), range(1, 9))   # the game's value for A
    db.strategy([1, 2, 3], [1, 2, 3], [1, 2, 3], upcard=3).strategy_a
"""

from __future__ import annotations

import os
from builtins import open as builtins_open
from typing import Any, Callable, Optional, Union

from . import _gops
from ._gops import (
    EXPLOIT_STATE_LIMIT,
    Agent,
    MAX_N,
    Db,
    DbError,
    Exploitability,
    GopsError,
    Layer,
    Strategy,
    open,
)

__all__ = [
    "Agent",
    "Db",
    "DbError",
    "EXPLOIT_STATE_LIMIT",
    "Exploitability",
    "GopsError",
    "Layer",
    "MAX_N",
    "Strategy",
    "exploitability",
    "fit",
    "open",
    "respond",
    "solve",
]

Progress = Union[bool, None, Callable[..., Any]]


def _progress(progress: Progress, desc: str, unit: str, draw: Callable[..., None]):
    """``(callback, bar)`` for a ``progress`` argument: the user's callable as it is; for
    ``True``, a tqdm bar (terminal or Jupyter) that ``draw(bar, *args)`` moves, or
    nothing without tqdm; nothing for ``False``. The caller closes the bar."""
    if callable(progress):
        return progress, None
    if not progress:
        return None, None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None, None
    bar = tqdm(desc=desc, unit=unit, unit_scale=True, dynamic_ncols=True)
    return (lambda *args: draw(bar, *args)), bar


def solve(
    n: int,
    objective: str = "points",
    db: Union[str, "os.PathLike[str]"] = "gops-db",
    threads: Optional[int] = None,
    memory_mb: Optional[int] = None,
    progress: Progress = True,
    skip_disk_check: bool = False,
    keep_from_layer: Optional[int] = None,
) -> Db:
    """Solves the ``n``-card game (``objective`` ``"points"`` or ``"win"``) into the db
    at ``db`` and returns it opened.

    The same solve as ``gops solve``: the same db, bit for bit, whatever ``threads``.
    An existing db of the same game is resumed where it stopped (a complete one is
    just opened). ``threads`` defaults to every core, ``memory_mb`` to half the
    available memory (at most 3 GiB). ``progress``: ``True`` for a tqdm bar (terminal
    or Jupyter; nothing if tqdm is not installed), ``False`` for none, or a callable
    ``progress(done, total, layer)`` counting matrix games. Ctrl-C stores the shard in
    hand and raises ``KeyboardInterrupt``; call ``solve`` again to resume. The GIL is
    released while it runs. ``keep_from_layer=K`` makes it a rolling solve (as
    ``gops solve --keep-from-layer K``): the data of the layers below K is removed as
    the solve goes, and the db returned is a book of layers K to N.
    """
    def draw(bar, done: int, total: int, layer: int) -> None:
        if bar.total != total:
            bar.total = total
        bar.set_description(f"layer {layer}", refresh=False)
        bar.update(done - bar.n)

    callback, bar = _progress(progress, "solve", "games", draw)
    try:
        return _gops.solve(
            n,
            objective,
            os.fspath(db),
            threads,
            memory_mb,
            callback,
            skip_disk_check,
            keep_from_layer,
        )
    finally:
        if bar is not None:
            bar.close()


def exploitability(
    db: Db,
    agent: Any,
    *,
    reads_diff: bool = True,
    progress: Progress = True,
) -> Exploitability:
    """The exact value of ``agent`` playing A against a best-responding B in ``db``'s
    game, by backward induction over every concrete state (as ``gops exploit``).

    ``agent`` is one of

    * a callable ``agent(a, b, prizes, upcard, diff)`` (A's hand, B's hand, the prizes
      left with the upcard among them, the upcard, A's score minus B's) returning the
      probability of each of A's cards in ascending order, or a dict ``{card:
      probability}``;
    * an OpenSpiel policy for ``goofspiel`` (:mod:`gops.openspiel`), asked as player 0;
    * the name of an agent of the vocabulary: ``"uniform"``, ``"upcard"``,
      ``"upcard-plus-one"``, ``"greedy"``, ``"equilibrium"``, a mixture such as
      ``"0.6*upcard+0.4*uniform"`` (the old ``"optimal"``, ``"random"``, ``"match"``,
      ``"plus-one"`` too; those of ``gops exploit --policy``).

    ``reads_diff``: for ``points``, whether the agent may depend on the score
    difference; ``False`` walks far fewer states but shows the agent 0. ``win`` always
    shows it (and an OpenSpiel policy is always shown it). The agent is taken to depend
    on the state only (not on the order in which it was reached). At most :data:`EXPLOIT_STATE_LIMIT` states.
    """
    if hasattr(agent, "action_probabilities") and not isinstance(agent, str):
        from .openspiel import agent_of_policy

        agent = agent_of_policy(agent, db)
        # an OpenSpiel state is built from the real score: every state is told apart
        reads_diff = True
    def draw(bar, states: int) -> None:
        bar.update(states - bar.n)

    callback, bar = _progress(progress, "exploitability", "states", draw)
    try:
        return _gops.exploitability(db, agent, reads_diff, callback)
    finally:
        if bar is not None:
            bar.close()


def respond(
    db: Db,
    opponent: str,
    a=None,
    b=None,
    prizes=None,
    diff: int = 0,
) -> dict:
    """The exact best response to the opponent model ``opponent`` (played by B; a rule,
    a mixture such as ``"0.6*upcard+0.4*uniform"``, or ``"fit:FILE"``), from a state (the
    start by default: ``a``, ``b``, ``prizes`` default to every card), as ``gops
    respond --json`` gives it: ``value``, ``equilibrium`` (what the db's equilibrium earns
    against the model), ``best_response``, ``gain``, ``exploitability`` (what a best
    response to A's best response takes back), ``states``. For ``points`` the results are
    the score still to come. A walk past the memory limit raises ValueError with its
    estimate."""
    import json

    full = list(range(1, db.n + 1))
    line = _gops.respond(
        db,
        opponent,
        full if a is None else a,
        full if b is None else b,
        full if prizes is None else prizes,
        diff,
    )
    return json.loads(line)


def fit(records) -> dict:
    """The mixture of the simple rules (``uniform``, ``upcard``, ``upcard-plus-one``,
    ``greedy``) that best explains recorded decisions, by maximum likelihood, as ``gops
    fit --json`` gives it: ``model`` (a model's text, usable wherever an agent is
    named), ``weights``, ``log_likelihood``, ``mean_log_likelihood``, ``decisions``.

    ``records``: a path to a games file (one JSON line a decision: a bot-protocol
    request with its ``bid``, or ``gops arena --json``'s records), or a sequence of such
    records, as dicts or JSON strings. A bad record raises ValueError naming it."""
    import json

    if isinstance(records, (str, bytes, os.PathLike)):
        with builtins_open(records, encoding="utf-8") as f:
            lines = f.read().splitlines()
    else:
        lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    return json.loads(_gops.fit(lines))

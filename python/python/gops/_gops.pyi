"""Type stubs of the extension module (see gops/__init__.py for the documented API)."""

import os
from typing import Any, Callable, Iterable, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

Cards = Union[Iterable[int], str]

MAX_N: int
EXPLOIT_STATE_LIMIT: int

class GopsError(Exception): ...
class DbError(GopsError): ...

class Layer:
    k: int
    slices: int
    states: int
    stored_values: int
    max_gap: float
    checksum: str
    matrix_games: int | None

class Strategy:
    upcard: int
    value: float
    cards_a: npt.NDArray[np.uint8]
    strategy_a: npt.NDArray[np.float64]
    cards_b: npt.NDArray[np.uint8]
    strategy_b: npt.NDArray[np.float64]
    gap: float

class Exploitability:
    game_value: float
    policy_value: float
    exploitability: float
    states: int

class Db:
    @property
    def n(self) -> int: ...
    @property
    def objective(self) -> str: ...
    @property
    def path(self) -> os.PathLike[str]: ...
    @property
    def layers(self) -> list[Layer]: ...
    @property
    def complete(self) -> bool: ...
    def value(self, a: Cards, b: Cards, prizes: Cards, diff: int = 0) -> float: ...
    def strategy(
        self, a: Cards, b: Cards, prizes: Cards, upcard: int, diff: int = 0
    ) -> Strategy: ...
    def to_arrow(
        self, layer: int, *, concrete: bool = False, all_diffs: bool = False
    ) -> Any: ...
    def export(
        self,
        path: Union[str, os.PathLike[str]],
        format: str,
        *,
        layers: Optional[Tuple[int, int]] = None,
        concrete: bool = False,
        all_diffs: bool = False,
        overwrite: bool = False,
    ) -> int: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Db": ...
    def __exit__(self, *args: Any) -> bool: ...

def open(
    path: Union[str, os.PathLike[str]],
    max_on_demand_games: Optional[int] = None,
    memory_mb: Optional[int] = None,
) -> Db: ...
def solve(
    n: int,
    objective: str = "points",
    db: Union[str, os.PathLike[str]] = "gops-db",
    threads: Optional[int] = None,
    memory_mb: Optional[int] = None,
    progress: Optional[Callable[[int, int, int], Any]] = None,
    skip_disk_check: bool = False,
    keep_from_layer: Optional[int] = None,
) -> Db: ...
def exploitability(
    db: Db,
    agent: Union[str, Callable[[list[int], list[int], list[int], int, int], Any]],
    reads_diff: bool = True,
    progress: Optional[Callable[[int], Any]] = None,
) -> Exploitability: ...
def arena_run(
    db: Db,
    decide: Callable[[str], str],
    games: int,
    seed: int,
    progress: Optional[Callable[[int], Any]] = None,
) -> tuple[str, list[str]]: ...

class ArenaGame:
    def __init__(self, db: Db, seed: int, game: int = 0, seat: str = "A") -> None: ...
    def request(self) -> Optional[str]: ...
    def answer(self, reply: str) -> str: ...
    def result(self) -> Optional[float]: ...

class Agent:
    def __init__(self, db: Db, name: str) -> None: ...
    @property
    def name(self) -> str: ...
    def decide(self, request: str) -> str: ...

def respond(
    db: Db,
    opponent: str,
    a: Iterable[int],
    b: Iterable[int],
    prizes: Iterable[int],
    diff: int = 0,
) -> str: ...
def fit(lines: list[str]) -> str: ...

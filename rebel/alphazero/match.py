"""Matches between two m,n,k players: colours alternate game by game, all games are played
side by side (so a net player searches them in batches), the score counts a win 1 and a
draw 1/2, with a 95% interval (:mod:`rebel.util.stats`, the normal rule of matches)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from rebel import _core
from rebel.alphazero.players import Player
from rebel.util.stats import MATCH, mean_interval_from_moments

__all__ = ["MatchResult", "play_match"]


@dataclass
class MatchResult:
    """Results from player A's side."""

    player_a: str
    player_b: str
    game: str
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    as_first: dict[str, int] = field(default_factory=lambda: {"wins": 0, "draws": 0, "losses": 0})
    as_second: dict[str, int] = field(default_factory=lambda: {"wins": 0, "draws": 0, "losses": 0})

    @property
    def score(self) -> float:
        """Mean points per game for A (win 1, draw 1/2)."""
        return (self.wins + 0.5 * self.draws) / self.games if self.games else float("nan")

    def interval(self) -> tuple[float, float]:
        """95% normal interval of the mean score (:data:`rebel.util.stats.MATCH`), clipped to
        [0, 1]: a point when every game ended alike, all of [0, 1] after one game, nan before."""
        n = self.games
        if n == 0:
            return (float("nan"), float("nan"))
        r = mean_interval_from_moments(n, self.wins + 0.5 * self.draws, self.wins + 0.25 * self.draws, MATCH)
        return (max(0.0, r.mean - r.half_width), min(1.0, r.mean + r.half_width))

    def as_dict(self) -> dict[str, Any]:
        low, high = self.interval()
        return {"player_a": self.player_a, "player_b": self.player_b, "game": self.game, "games": self.games,
                "wins": self.wins, "draws": self.draws, "losses": self.losses, "score": self.score,
                "score_interval_95": [low, high], "a_first": dict(self.as_first), "a_second": dict(self.as_second)}


def play_match(a: Player, b: Player, m: int, n: int, k: int, games: int,
               on_game_end: Optional[Callable[[int], None]] = None) -> MatchResult:
    """Plays ``games`` games of A against B; A moves first in the even-numbered games."""
    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    boards = [_core.MnkBoard(m, n, k) for _ in range(games)]
    result = MatchResult(a.name, b.name, f"mnk(m={m}, n={n}, k={k})")
    finished = 0
    while finished < games:
        for side, player in ((0, a), (1, b)):
            # Games where `player` is to move: A plays colour (g % 2) in game g.
            turn = [g for g, bd in enumerate(boards)
                    if not bd.terminal and (bd.to_move == (g % 2)) == (side == 0)]
            if not turn:
                continue
            moves = player.moves([boards[g] for g in turn], turn)
            for g, move in zip(turn, moves):
                boards[g].play(move)
                if boards[g].terminal:
                    finished += 1
                    _record(result, g, boards[g])
                    if on_game_end is not None:
                        on_game_end(finished)
    return result


def _record(result: MatchResult, game: int, board: "_core.MnkBoard") -> None:
    a_colour = game % 2
    outcome = board.result_for(a_colour)
    key = "wins" if outcome > 0 else "losses" if outcome < 0 else "draws"
    setattr(result, key, getattr(result, key) + 1)
    (result.as_first if a_colour == 0 else result.as_second)[key] += 1
    result.games += 1


def against_every_reply(player: Player, m: int, n: int, k: int, max_positions: int = 200_000,
                        optimal_only: bool = False) -> dict[str, Any]:
    """Plays ``player`` against every possible opponent: at each opponent turn every legal
    move is tried (with ``optimal_only``, every move of the best exact value: every game a
    perfect opponent can play), at the player's turns its own choice is taken (searched level by level,
    so a net player sees each level as one batch). For both colours, the counts of game ends
    it reaches: ``{"first": {"wins", "draws", "losses", "lines"}, "second": {...}}``; a player
    that never loses has 0 losses in both. Small boards only (ValueError past
    ``max_positions`` positions)."""
    out: dict[str, Any] = {}
    solver = _core.MnkSolver(m, n, k) if optimal_only else None
    for colour, label in ((0, "first"), (1, "second")):
        counts = {"wins": 0, "draws": 0, "losses": 0, "lines": 0}
        frontier = [_core.MnkBoard(m, n, k)]
        seen = 0
        while frontier:
            seen += len(frontier)
            if seen > max_positions:
                raise ValueError(f"more than {max_positions} positions: the board is too large to try every reply")
            mine = [b for b in frontier if b.to_move == colour]
            theirs = [b for b in frontier if b.to_move != colour]
            nxt: list[Any] = []
            if mine:
                for board, move in zip(mine, player.moves(mine, list(range(len(mine))))):
                    child = board.copy()
                    child.play(move)
                    nxt.append(child)
            for board in theirs:
                replies = board.legal_moves()
                if solver is not None:
                    values = solver.move_values(board)
                    replies = [c for c in replies if values[c] == max(values)]
                for move in replies:
                    child = board.copy()
                    child.play(move)
                    nxt.append(child)
            frontier = []
            for board in nxt:
                if board.terminal:
                    r = board.result_for(colour)
                    counts["wins" if r > 0 else "losses" if r < 0 else "draws"] += 1
                    counts["lines"] += 1
                else:
                    frontier.append(board)
        out[label] = counts
    return out

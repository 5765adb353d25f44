"""The picture players read: a node's strategy on the 13 x 13 hand grid, as a PNG.

:func:`plot_strategy_grid` draws the actor's average strategy at a node of a solved hold'em
endgame on :data:`rebel.games.holdem_ranges.GRID_LABELS` (AA at the top left, suited hands
above the diagonal, offsuit below). Each cell is a stacked horizontal bar: one segment per
action, as wide as its frequency over the cell's combos (each hand weighted by its reach at the
node), as tall as the share of the cell's combos in the range there
(:func:`rebel.search.holdem_results.grid_strategy`); a cell with no combo there (not in the
range, folded away earlier, or blocked by the board) is grey. Folds are blue, checks and calls
green, bets and raises red (darker as they grow), the all-in darkest; the legend gives each
action's frequency over the range, the title the spot, the line and who acts.

matplotlib is optional (the ``plots`` extra): it is imported here only, on the Agg canvas (no
display, no global backend switch); without it :func:`require_matplotlib` raises an ImportError
that says how to install it.
"""
from __future__ import annotations

import io
import os
from typing import Any, Optional, Union

import numpy as np

from rebel import _core
from rebel.games.holdem_lines import NodeRef, format_line
from rebel.games.holdem_ranges import GRID_LABELS
from rebel.games.holdem_spot import Spot
from rebel.search.holdem_results import GridStrategy, grid_strategy, hand_results
from rebel.util.atomic_io import atomic_write_bytes

__all__ = ["FIGSIZE", "action_colors", "plot_strategy_grid", "require_matplotlib"]

#: The figure's size in inches; at ``dpi`` 100 the PNG is 1000 x 1100 pixels.
FIGSIZE = (10.0, 11.0)
EMPTY = "#d0d0d0"
FOLD = "#4f86c6"
PASSIVE = "#5aae61"  # check, call
ALL_IN = "#67001f"
BETS = ("#f4a582", "#e0735a", "#d6604d", "#b2182b", "#8e0d25")


def require_matplotlib() -> Any:
    """The matplotlib module, or an ImportError saying how to install it."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError("the strategy grid needs matplotlib, which is not installed: pip install matplotlib "
                          "(or the package's 'plots' extra)") from None
    return matplotlib


def action_colors(actions: list[str]) -> list[str]:
    """A colour per action label: fold blue, check and call green, bets and raises red by size
    (in the order given), the all-in darkest."""
    sized = [a for a in actions if a.startswith(("bet", "raise"))]
    colors = []
    for a in actions:
        if a == "fold":
            colors.append(FOLD)
        elif a in ("check", "call"):
            colors.append(PASSIVE)
        elif a == "all-in":
            colors.append(ALL_IN)
        else:
            k = sized.index(a)
            colors.append(BETS[min(len(BETS) - 1, round(k * (len(BETS) - 1) / max(1, len(sized) - 1)))]
                          if len(sized) > 1 else BETS[2])
    return colors


def _title(spot: Optional[Spot], results: dict[str, Any], grid: GridStrategy, title: Optional[str]) -> str:
    if title is not None:
        return title
    head = (spot.description or spot.describe()) if spot is not None else ""
    board = " ".join(results["board"])
    line = format_line(results["line"])
    return (f"{head}\n" if head else "") + (f"board {board}, pot {results['pot']:g}: {line}\n"
                                            f"{grid.player.upper()} to act, {grid.combos.sum():.1f} combos")


def plot_strategy_grid(engine: _core.HoldemSolver, game: _core.HoldemEndgame, node: NodeRef,
                       path: Union[str, "os.PathLike[str]"], spot: Optional[Spot] = None,
                       title: Optional[str] = None, dpi: int = 100) -> GridStrategy:
    """Writes the PNG of the actor's strategy at ``node`` (an id or a line) to ``path``
    (atomically; :data:`FIGSIZE` x ``dpi`` pixels) and returns the grid drawn. ``spot`` adds its
    description to the title; ``title`` replaces it."""
    require_matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch, Rectangle

    results = hand_results(engine, game, node)
    grid = grid_strategy(results)
    colors = action_colors(grid.actions)
    fig = Figure(figsize=FIGSIZE, dpi=dpi)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.03, 0.1, 0.94, 0.78))
    ax.set_xlim(0, 13)
    ax.set_ylim(13, 0)
    ax.set_aspect("equal")
    ax.axis("off")
    for row in range(13):
        for col in range(13):
            has = grid.combos[row, col] > 0
            ax.add_patch(Rectangle((col, row), 1, 1, facecolor="#f4f4f4" if has else EMPTY, edgecolor="none"))
            if has:
                height = float(grid.share[row, col])
                left = float(col)
                for freq, color in zip(grid.frequencies[row, col], colors):
                    if freq > 0:
                        ax.add_patch(Rectangle((left, row + 1 - height), float(freq), height, facecolor=color,
                                               edgecolor="none"))
                        left += float(freq)
            ax.add_patch(Rectangle((col, row), 1, 1, facecolor="none", edgecolor="white", linewidth=1.0))
            ax.text(col + 0.06, row + 0.08, GRID_LABELS[row][col], ha="left", va="top", fontsize=8,
                    color="black" if has else "#707070")
    frequencies = results["frequencies"]
    handles = [Patch(facecolor=c, label=f"{a} {100 * frequencies[a]:.1f}%" if np.isfinite(frequencies[a]) else a)
               for a, c in zip(grid.actions, colors)]
    fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), 6), frameon=False, fontsize=11)
    fig.suptitle(_title(spot, results, grid, title), fontsize=12)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    atomic_write_bytes(path, buf.getvalue())
    return grid

"""Shared by the self-play tests: a small random value net and a tree path."""
from __future__ import annotations

import numpy as np
import torch

from rebel.nets.value_mlp import ValueMLP, to_native


def random_net(game, seed=1):
    """A native 2x32 MLP with torch's seeded initialisation."""
    torch.manual_seed(seed)
    return to_native(ValueMLP.for_game(game, hidden=32), game)


def path_to(tree, node):
    """(parent, child) pairs from the root to `node`."""
    parent = np.asarray(tree.parent)
    edges = []
    while parent[node] >= 0:
        edges.append((int(parent[node]), node))
        node = int(parent[node])
    return edges[::-1]

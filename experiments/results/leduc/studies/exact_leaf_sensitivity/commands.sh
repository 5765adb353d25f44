#!/bin/bash
# What produced this folder (run from the repository root, .venv active; 2-core Intel Xeon with
# AMX, nothing else running). Planned 2026-12-06 07:15Z, before any of it ran.
#
# Two questions about the exact-leaf (oracle) level of the Leduc protocol (mode (b), LCFR
# T = 1024, N = 1024, depth 10, seeds 0-2; each leaf PBS's rest of the game solved with 1,024
# LCFR iterations):
# 1. How sensitive is it to leaf values that differ by rounding only? The oracle plus a fixed
#    random error of max norm 1e-9 chips (rebel.PerturbedNet; the 0.03-10 chip rows are in
#    experiments/results/leduc/studies/nolimit_leaf_error/). Measured before: exact values before the
#    deal and after it differ by 5e-10 (rounding), and the round-one CFR iterates then part
#    within a few iterations (tests/games/test_leduc_solvers.py).
# 2. The leaf PBS before or after the deal (search.chance_leaves): after_deal is the cached
#    oracle row (experiments/results/leduc/studies/nolimit_45min/, experiments/results/leduc/).
set -euo pipefail
O=experiments/results/leduc/studies/exact_leaf_sensitivity
run() {  # GAME NAME ARGS...
  local game=$1 name=$2; shift 2
  for s in 0 1 2; do
    rebel eval --game $game --depth 10 --threads 2 --no-mode-a --no-progress --json search.full_game=false \
      --net oracle --solver lcfr --iters 1024 --repeats 1024 --seed $s "$@" > $O/${game}_${name}_seed$s.json
  done
}
run leduc_nolimit error1e-9 --leaf-error 1e-9 --leaf-error-kind random
run leduc_nolimit at_deal --chance-leaves at_deal
run leduc at_deal --chance-leaves at_deal
run leduc error1e-9 --leaf-error 1e-9 --leaf-error-kind random
run leduc_nolimit error1e-9_errseed1 --leaf-error 1e-9 --leaf-error-kind random --leaf-error-seed 1

#!/bin/bash
# What produced this folder (run from the repository root, .venv active; 2-core Intel Xeon with
# AMX, beside other evaluations). The paper's protocol on no-limit Leduc (mode (b), LCFR T = 1024,
# N = 1024, depth 10, seeds 0-2) with exact leaf values (the oracle: each leaf PBS's rest of the
# game solved with 1,024 LCFR iterations) plus a known error: a fixed random vector per public
# state and queried player, of max norm DELTA chips over the hands (rebel.PerturbedNet).
# DELTA = 0 is the plain oracle (seed 0 run here; seeds 1-2 are the cached oracle rows of
# experiments/results/leduc/studies/nolimit_45min/leduc_nolimit/eval/, which seed 0 reproduces bit for bit).
set -euo pipefail
O=experiments/results/leduc/studies/nolimit_leaf_error
for d in 0.03 0.1 0.3 1 3 10; do for s in 0 1 2; do
  rebel eval --game leduc_nolimit --depth 10 --threads 2 --no-mode-a --no-progress --json search.full_game=false \
    --net oracle --leaf-error $d --leaf-error-kind random --solver lcfr --iters 1024 --repeats 1024 --seed $s \
    > $O/oracle_error_random_${d}_seed$s.json
done; done
rebel eval --game leduc_nolimit --depth 10 --threads 2 --no-mode-a --no-progress --json search.full_game=false \
  --net oracle --solver lcfr --iters 1024 --repeats 1024 --seed 0 > $O/oracle_error_random_0_seed0.json
# Exact leaf values from another number of oracle iterations (the protocol's continuation still
# runs T = 1024): 1,000 (a slightly different solve) and 2,048 (a more converged one).
for t in 1000 2048; do for s in 0 1 2; do
  rebel eval --game leduc_nolimit --depth 10 --threads 2 --no-mode-a --no-progress --json search.full_game=false \
    --net oracle --oracle-iters $t --solver lcfr --iters 1024 --repeats 1024 --seed $s > $O/oracle_T${t}_seed$s.json
done; done

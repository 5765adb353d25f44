#!/bin/bash
# Limit Leduc: mode (b) against N beyond the protocol's 1024, with the net that ships as
# pretrained:leduc (run_sp1024_30min) and with exact leaves. Each JSON is `rebel eval --json`
# output: mode_b holds the exploitability at N = 1, 2, 4, ... of the same samples, so its
# N = 1024 entry is the protocol's figure for that seed (equal to the cached rows in
# experiments/results/leduc/limit/leduc/eval). Run from the repository root.
set -e
OUT=experiments/results/leduc/studies/n_study
NET=experiments/results/leduc/runs/leduc/run_sp1024_30min/weights.bin
COMMON="--game leduc --depth 10 --threads 1 --no-mode-a --no-progress --json search.full_game=false"
for seed in 0 1 2; do  # the protocol's search (LCFR T = 1024), to N = 16384
  rebel eval $COMMON --net $NET --solver lcfr --iters 1024 --repeats 16384 --seed $seed \
    > $OUT/trained_lcfr_T1024_d10_N16384_seed$seed.json
done
# The stronger search with the trained net (DCFR T = 1024), seed 0, to N = 16384.
rebel eval $COMMON --net $NET --solver dcfr --iters 1024 --repeats 16384 --seed 0 \
  > $OUT/trained_dcfr_T1024_d10_N16384_seed0.json
# The strongest exact-leaf search of the table (LCFR T = 4096, oracle at 1024 LCFR
# iterations per leaf), seed 0, to N = 8192.
rebel eval $COMMON --net oracle --oracle-iters 1024 --solver lcfr --iters 4096 --repeats 8192 --seed 0 \
  > $OUT/oracle_lcfr_T4096_d10_N8192_oracleT1024_seed0.json
# No-limit Leduc (DeepStack-Leduc's game) to N = 8192: exact leaves (oracle at 1024 LCFR
# iterations per leaf, seeds 0-2) and the net that ships as pretrained:leduc_nolimit
# (run_45min_zen5, seed 0).
for seed in 0 1 2; do
  rebel eval --game leduc_nolimit --depth 10 --threads 1 --no-mode-a --no-progress --json search.full_game=false \
    --net oracle --oracle-iters 1024 --solver lcfr --iters 1024 --repeats 8192 --seed $seed \
    > $OUT/nolimit_oracle_lcfr_T1024_d10_N8192_oracleT1024_seed$seed.json
done
rebel eval --game leduc_nolimit --depth 10 --threads 1 --no-mode-a --no-progress --json search.full_game=false \
  --net experiments/results/leduc/runs/leduc_nolimit/run_45min_zen5/weights.bin --solver lcfr --iters 1024 \
  --repeats 8192 --seed 0 > $OUT/nolimit_trained_lcfr_T1024_d10_N8192_seed0.json

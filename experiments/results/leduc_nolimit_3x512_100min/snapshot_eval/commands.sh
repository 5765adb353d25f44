#!/bin/bash
# No-limit Leduc, 3x512 (run_3x512_100min_zen4; the shipped config with model.layers=3): the
# paper's protocol (mode (b), LCFR T = 1024, depth 10, N = 1024, seeds 0-2) on the run's
# snapshots at epochs 2,750, 3,000 and 3,250 (chosen before the run ended: the last three
# before its final net), to show how far nets a few minutes apart read under the protocol.
# Each JSON is `rebel eval --json` output; its mode_b N = 1024 entry is the protocol figure.
# Run from the repository root.
set -e
RUN=experiments/results/leduc/leduc_nolimit/run_3x512_100min_zen4
OUT=experiments/results/leduc_nolimit_3x512_100min/snapshot_eval
for epoch in 002750 003000 003250; do
  for seed in 0 1 2; do
    rebel eval --game leduc_nolimit --depth 10 --threads 2 --no-mode-a --no-progress --json search.full_game=false \
      --net $RUN/snapshots/epoch_$epoch.bin --solver lcfr --iters 1024 --repeats 1024 --seed $seed \
      > $OUT/epoch${epoch}_lcfr_T1024_d10_N1024_seed$seed.json
  done
done

#!/bin/bash
# No-limit Leduc, 3x512 (run_3x512_100min_zen4; the shipped config with model.layers=3): the
# paper's protocol (mode (b), LCFR T = 1024, depth 10, N = 1024, seeds 0-2) on the run's
# snapshots at epochs 2,750, 3,000 and 3,250 (chosen before the run ended: the last three
# before its final net), to show how far nets a few minutes apart read under the protocol.
# Run from the repository root.
bash experiments/snapshot_protocol.sh leduc_nolimit 10 experiments/results/leduc/runs/leduc_nolimit/run_3x512_100min_zen4 \
  experiments/results/leduc/studies/nolimit_3x512_100min/snapshot_eval 002750 003000 003250

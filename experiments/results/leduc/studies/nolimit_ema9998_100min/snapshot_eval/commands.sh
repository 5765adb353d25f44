#!/bin/bash
# No-limit Leduc, 2x512, weight moving average 0.9998 (run_h512_ema9998_100min_zen4): the
# paper's protocol (mode (b), LCFR T = 1024, depth 10, N = 1024, seeds 0-2) on the run's
# snapshots at epochs 3,250, 3,500 and 3,750 (chosen before the run ended: the last three
# before its final net), to show how far nets a few minutes apart read under the protocol.
# Run from the repository root.
bash experiments/snapshot_protocol.sh leduc_nolimit 10 experiments/results/leduc/runs/leduc_nolimit/run_h512_ema9998_100min_zen4 \
  experiments/results/leduc/studies/nolimit_ema9998_100min/snapshot_eval 003250 003500 003750

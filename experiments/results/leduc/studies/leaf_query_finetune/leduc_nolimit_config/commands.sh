#!/bin/bash
# What produced this folder (run from the repository root, .venv active; 2-core Intel Xeon with
# AMX, beside a 2-thread oracle evaluation of experiments/warm_start.py). The net: the final net
# of the leduc_nolimit config's 100-minute run (2x512, moving average 0.9998; 2.078 +- 0.069
# under the protocol). Six rounds of fitting at its own root search's leaf queries, then the
# protocol (mode (b), LCFR T = 1024, N = 1024, depth 10, seeds 0-2, fp32) on every round's net.
set -euo pipefail
RUN=experiments/results/leduc/runs/leduc_nolimit/run_h512_ema9998_100min_zen4
O=experiments/results/leduc/studies/leaf_query_finetune/leduc_nolimit_config
python experiments/leaf_query_finetune.py --game leduc_nolimit --net $RUN/weights.bin --rounds 6 --out $O
for r in 0 1 2 3 4 5 6; do for s in 0 1 2; do
  rebel eval --game leduc_nolimit --depth 10 --threads 2 --no-mode-a --no-progress --json search.full_game=false \
    --net $O/round_$r.bin --solver lcfr --iters 1024 --repeats 1024 --seed $s > $O/eval_round${r}_seed$s.json
done; done
# round_<r>.bin (1.1 MB each) are not committed: the first command writes them again.

#!/bin/bash
# What produced this folder (run from the repository root, .venv active; 2-core Intel Xeon with
# AMX, beside a 2-thread oracle evaluation of experiments/warm_start.py). The net: the final net
# of the leduc_nolimit config's 100-minute run (2x512; 2.078 +- 0.069 under the protocol as it is).
python experiments/suit_symmetry.py --game leduc_nolimit \
    --net experiments/results/leduc/runs/leduc_nolimit/run_h512_ema9998_100min_zen4/weights.bin \
    --out experiments/results/leduc/studies/suit_symmetry/leduc_nolimit_config

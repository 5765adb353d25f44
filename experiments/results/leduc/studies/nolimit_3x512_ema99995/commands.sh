#!/bin/bash
# What produced this folder (run from the repository root, .venv active). The training (100 min,
# 2-core Intel Xeon with AMX, self-play net bf16), started under RULE.md:
# rebel train leduc_nolimit model.layers=3 trainer.ema_decay=0.99995 run.snapshot_every=250 run.dir=experiments/results/leduc/runs/leduc_nolimit run.name=run_3x512_ema99995_spr
# then the protocol (mode (b), N = 1024, T = 1024, depth 10, seeds 0-2, fp32) on the final net,
# and on the last two snapshots before it (fixed in RULE.md before the run started):
set -euo pipefail
RUN=experiments/results/leduc/runs/leduc_nolimit/run_3x512_ema99995_spr
O=experiments/results/leduc/studies/nolimit_3x512_ema99995
mkdir -p $O/final/leduc_nolimit/eval
cp experiments/results/leduc/studies/nolimit_45min/leduc_nolimit/eval/{full_*,oracle_*,zero_*} $O/final/leduc_nolimit/eval/
python experiments/leduc.py --games leduc_nolimit --run leduc_nolimit=$RUN --stronger none --out $O/final
bash experiments/snapshot_protocol.sh leduc_nolimit 10 $RUN $O/snapshot_eval "$@"   # the two epochs, e.g. 003500 003750

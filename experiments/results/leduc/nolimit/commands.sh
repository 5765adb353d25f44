#!/bin/bash
# What produced this folder (run from the repository root, .venv active). The training (100 min,
# 2-core Intel Xeon with AMX, self-play net bf16), started under RULE.md:
# rebel train leduc_nolimit model.layers=3 trainer.ema_decay=0.99995 trainer.selfplay_weights=raw run.snapshot_every=250 run.dir=experiments/results/leduc/runs/leduc_nolimit run.name=run_3x512_ema99995_raw
# then the protocol (mode (b), N = 1024, T = 1024, depth 10, seeds 0-2, fp32) on the final net,
# and on the last two snapshots before it (fixed in RULE.md before the run started):
set -euo pipefail
RUN=experiments/results/leduc/runs/leduc_nolimit/run_3x512_ema99995_raw
O=experiments/results/leduc/nolimit
mkdir -p $O/final/leduc_nolimit/eval
cp experiments/results/leduc/studies/nolimit_45min/leduc_nolimit/eval/{full_*,oracle_*,zero_*} $O/final/leduc_nolimit/eval/
python experiments/leduc.py --games leduc_nolimit --run leduc_nolimit=$RUN --stronger none --out $O/final
bash experiments/snapshot_protocol.sh leduc_nolimit 10 $RUN $O/snapshot_eval "$@"   # the two epochs, e.g. 003500 003750
# The diagnostic added to RULE.md during the run: the final checkpoint's raw weights.
python experiments/checkpoint_weights.py $RUN raw $O/raw_final.bin
mkdir -p $O/raw_eval
for seed in 0 1 2; do
  rebel eval --game leduc_nolimit --depth 10 --threads 2 --no-mode-a --no-progress --json search.full_game=false \
    --net $O/raw_final.bin --solver lcfr --iters 1024 --repeats 1024 --seed $seed \
    > $O/raw_eval/raw_final_lcfr_T1024_d10_N1024_seed$seed.json
done
rm $O/raw_final.bin   # 2.2 MB, not committed (as the snapshots)

#!/bin/bash
# What produced this folder (run from the repository root, .venv active). The training (100 min, 2-core AMD EPYC Zen 4):
# rebel train leduc_nolimit model.layers=3 run.snapshot_every=250 evaluation.every=250 evaluation.seeds=3 evaluation.repeats=1024 evaluation.seed=100 evaluation.keep_best=true run.dir=experiments/results/leduc/runs/leduc_nolimit run.name=run_3x512_select_zen4
# then the protocol on seeds 0-2 for the chosen net (best/) and the final one (final/):
set -euo pipefail
RUN=experiments/results/leduc/runs/leduc_nolimit/run_3x512_select_zen4
O=experiments/results/leduc/studies/nolimit_3x512_select
for sub in best final; do
  mkdir -p $O/$sub/leduc_nolimit/eval
  cp experiments/results/leduc/studies/nolimit_45min/leduc_nolimit/eval/{full_*,oracle_*,zero_*} $O/$sub/leduc_nolimit/eval/
done
python experiments/leduc.py --games leduc_nolimit --run leduc_nolimit=$RUN --net best --stronger none --out $O/best
python experiments/leduc.py --games leduc_nolimit --run leduc_nolimit=$RUN --net final --stronger none --out $O/final

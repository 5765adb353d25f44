#!/bin/bash
# The paper's protocol (mode (b), LCFR T = 1024, N = 1024, seeds 0-2, fp32) on a training
# run's snapshots: one `rebel eval --json` file per snapshot and seed, whose mode_b N = 1024
# entry is the protocol figure. Run from the repository root with `rebel` on the PATH.
#
#   bash experiments/snapshot_protocol.sh GAME DEPTH RUN_DIR OUT_DIR EPOCH...
#   bash experiments/snapshot_protocol.sh leduc_nolimit 10 RUN OUT 002750 003000
set -euo pipefail
if [ $# -lt 5 ]; then
  echo "usage: $0 GAME DEPTH RUN_DIR OUT_DIR EPOCH... (EPOCH as in RUN_DIR/snapshots/epoch_EPOCH.bin)" >&2
  exit 2
fi
GAME=$1 DEPTH=$2 RUN=$3 OUT=$4
shift 4
mkdir -p "$OUT"
for epoch in "$@"; do
  net="$RUN/snapshots/epoch_$epoch.bin"
  [ -f "$net" ] || { echo "no snapshot $net" >&2; exit 2; }
  for seed in 0 1 2; do
    rebel eval --game "$GAME" --depth "$DEPTH" --threads 2 --no-mode-a --no-progress --json search.full_game=false \
      --net "$net" --solver lcfr --iters 1024 --repeats 1024 --seed "$seed" \
      > "$OUT/epoch${epoch}_lcfr_T1024_d${DEPTH}_N1024_seed$seed.json"
  done
done

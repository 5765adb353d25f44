#!/usr/bin/env bash
# Sanitizer runs of the C++ core: builds rebel._core a second time with
#   asan: AddressSanitizer + UndefinedBehaviorSanitizer (halting on the first report) and runs
#         the test subset that reaches every C++ entry point;
#   tsan: ThreadSanitizer and runs the multi-threaded tests.
# Each build goes to its own directory (build/sanitize-KIND/), never over the normal in-place
# build; the tests run from there with the sanitizer runtime preloaded into Python.
#
#   bash scripts/sanitize.sh            # both jobs
#   bash scripts/sanitize.sh asan       # one job (asan or tsan)
#   PYTHON=.venv/bin/python bash scripts/sanitize.sh
#
# Environment: PYTHON (interpreter; default .venv/bin/python if present, else python3), REBEL_BUILD_JOBS (compile jobs, default 2),
# SANITIZE_PYTEST_ARGS (extra pytest arguments), SANITIZE_NO_BUILD=1 (reuse build/sanitize-KIND). Exit status: non-zero on any report or failure.
set -euo pipefail
cd "$(dirname "$0")/.."
# The interpreter: $PYTHON, else the project's virtual environment if there is one, else python3.
if [ -z "${PYTHON:-}" ]; then
  if [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
# Absolute (the tests run from the build directory); a venv's symlink is kept as it is.
case "$PYTHON" in */*) PYTHON="$(cd "$(dirname "$PYTHON")" && pwd)/$(basename "$PYTHON")" ;; esac
ROOT="$PWD"
JOBS=("$@")
[ ${#JOBS[@]} -eq 0 ] && JOBS=(asan tsan)

# Test selection per job. ASan/UBSan: games and trees, every solver (full game, CFR-D with the
# zero, oracle, MLP and Python-callable nets, MCCFR, matrix games), test-time search and its
# threaded evaluation, the MLP and conv-net forward passes and weight swap, PBS, policy I/O, self-play, the
# thread-safety tests, the property-based fuzzing of the bindings, hand ranks and the hold'em
# endgame (linear showdown against its dense oracle, every solver, locking, per-hand results). torch is not loaded
# under the sanitizers (an import of it fails, so tests that need it are skipped; weights
# come from rebel.weights_io's numpy writer). TSan: the tests that run C++ threads.
ASAN_TESTS=(
  tests/games/test_games.py
  tests/search/test_full_game_solvers.py
  tests/search/test_matrix_game.py
  tests/search/test_mccfr.py
  tests/cli/test_bad_input.py
  tests/interop/test_policy_io.py
  tests/search/test_search.py
  tests/search/test_search_protocol.py
  tests/search/test_off_path.py
  tests/search/test_concurrency.py
  tests/package/test_fuzz_bindings.py
  tests/nets/test_mlp_bf16.py
  tests/games/test_mnk.py
  tests/alphazero/test_alphazero_inference.py
  tests/nets/test_denormals.py
  tests/search/test_selfplay_reuse.py
  tests/games/test_hand_rank.py
  tests/games/test_holdem_endgame.py
  tests/search/test_holdem_lock.py
  tests/search/test_holdem_results.py
  tests/search/test_holdem_isomorphism.py
  tests/search/test_holdem_river_values.py
  tests/search/test_holdem_turn_search.py
)
# Tests that run the CLI in a subprocess (their names say cli); not the folder tests/cli/, whose
# test_bad_input.py is on the list above.
ASAN_DESELECT="test_cli or _cli_ or slow"
TSAN_TESTS=(tests/search/test_concurrency.py tests/search/test_search.py tests/alphazero/test_alphazero_inference.py
            tests/search/test_selfplay_reuse.py tests/games/test_holdem_endgame.py)
TSAN_DESELECT="slow or not (thread or gil or concurren or swap)"

build() {  # build KIND SANITIZE -> prints the directory to put on PYTHONPATH
  local kind="$1" sanitize="$2" dir="$ROOT/build/sanitize-$1"
  if [ -n "${SANITIZE_NO_BUILD:-}" ] && compgen -G "$dir/lib/rebel/_core*.so" >/dev/null; then
    echo "$dir/lib"  # re-run the tests on the existing build
    return 0
  fi
  mkdir -p "$dir/lib"
  # The Python package (without any in-place extension) next to the sanitized extension.
  rm -rf "$dir/lib/rebel"
  cp -r "$ROOT/rebel" "$dir/lib/rebel"
  find "$dir/lib/rebel" \( -name '_core*.so' -o -name '_bench*.so' -o -name __pycache__ \) -prune -exec rm -rf {} +
  # torch is kept out: its own libraries are not built for a preloaded sanitizer runtime.
  mkdir -p "$dir/lib/torch"
  echo 'raise ModuleNotFoundError("torch is not loaded under the sanitizers (scripts/sanitize.sh)")' >"$dir/lib/torch/__init__.py"
  REBEL_SANITIZE="$sanitize" nice -n 19 "$PYTHON" setup.py -q build_ext \
    --build-lib "$dir/lib" --build-temp "$dir/temp" >"$dir/build.log" 2>&1 || {
    cat "$dir/build.log" >&2
    echo "sanitize.sh: the $kind build failed" >&2
    return 1
  }
  echo "$dir/lib"
}

# Preloaded after the sanitizer runtime: Python does not link libstdc++, and without it the
# runtime cannot find the real __cxa_throw (every C++ exception would abort the process).
STDCXX=$(g++ -print-file-name=libstdc++.so)

run_job() {  # run_job KIND
  local kind="$1" lib start
  start=$(date +%s)
  local -a runtime_env pytest_args launcher=()
  case "$kind" in
    asan)
      lib=$(build asan address,undefined)
      # detect_leaks=0: CPython itself never frees some allocations at exit.
      runtime_env=(LD_PRELOAD="$(g++ -print-file-name=libasan.so) $STDCXX"
        ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1"
        UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
      pytest_args=("${ASAN_TESTS[@]/#/$ROOT/}" -k "not ($ASAN_DESELECT)")
      ;;
    tsan)
      lib=$(build tsan thread)
      runtime_env=(LD_PRELOAD="$(g++ -print-file-name=libtsan.so) $STDCXX"
        TSAN_OPTIONS="halt_on_error=1:abort_on_error=1:second_deadlock_stack=1:report_signal_unsafe=0:suppressions=$ROOT/scripts/tsan_suppressions.txt")
      # TSan's fixed shadow layout clashes with the high mmap randomisation of recent
      # kernels ("unexpected memory mapping"): run without address-space randomisation.
      launcher=(setarch "$(uname -m)" -R)
      pytest_args=("${TSAN_TESTS[@]/#/$ROOT/}" -k "not ($TSAN_DESELECT)")
      ;;
    *)
      echo "sanitize.sh: unknown job '$kind' (asan or tsan)" >&2
      return 2
      ;;
  esac
  # Run from the build's package directory: `python -m pytest` puts the working directory
  # first on sys.path, so the sanitized rebel is imported, never the in-place build.
  # --capture=sys: pytest leaves file descriptor 2 alone, so a sanitizer report reaches the log.
  (
    cd "$lib"
    env PYTHONPATH="$lib" REBEL_SANITIZER="$kind" "${runtime_env[@]}" "${launcher[@]}" "$PYTHON" -c \
      "import rebel._core as c, sys; sys.exit(0 if c.__file__.startswith('$lib/') else 'sanitize.sh: imported ' + c.__file__)"
    env PYTHONPATH="$lib" REBEL_SANITIZER="$kind" "${runtime_env[@]}" nice -n 19 "${launcher[@]}" "$PYTHON" -m pytest -q \
      -p no:cacheprovider --capture=sys --rootdir "$ROOT" "${pytest_args[@]}" ${SANITIZE_PYTEST_ARGS:-}
  )
  echo "sanitize.sh: $kind job clean in $(( $(date +%s) - start )) s (build and tests)"
}

for job in "${JOBS[@]}"; do run_job "$job"; done

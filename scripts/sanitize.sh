#!/usr/bin/env bash
# Sanitizer runs of the C++ core (issue 15): builds rebel._core a second time with
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
# SANITIZE_PYTEST_ARGS (extra pytest arguments). Exit status: non-zero on any report or failure.
set -euo pipefail
cd "$(dirname "$0")/.."
# The interpreter: $PYTHON, else the project's virtual environment if there is one, else python3.
if [ -z "${PYTHON:-}" ]; then
  if [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
ROOT="$PWD"
JOBS=("$@")
[ ${#JOBS[@]} -eq 0 ] && JOBS=(asan tsan)

# Test selection per job. ASan/UBSan: games and trees, every solver (full game, CFR-D with the
# zero, oracle, MLP and Python-callable nets, MCCFR, matrix games), test-time search and its
# threaded evaluation, the MLP forward pass and weight swap, PBS, policy I/O, self-play, the
# thread-safety tests and the property-based fuzzing of the bindings. torch is not loaded
# under the sanitizers (an import of it fails, so tests that need it are skipped; weights
# come from rebel.weights_io's numpy writer). TSan: the tests that run C++ threads.
ASAN_TESTS=(
  tests/test_games.py
  tests/test_full_game_solvers.py
  tests/test_matrix_game.py
  tests/test_mccfr.py
  tests/test_bad_input.py
  tests/test_policy_io.py
  tests/test_search.py
  tests/test_search_protocol.py
  tests/test_off_path.py
  tests/test_concurrency.py
  tests/test_fuzz_bindings.py
)
ASAN_DESELECT="cli or slow"
TSAN_TESTS=(tests/test_concurrency.py tests/test_search.py)
TSAN_DESELECT="slow or not (thread or gil or concurren or swap)"

build() {  # build KIND SANITIZE -> prints the directory to put on PYTHONPATH
  local kind="$1" sanitize="$2" dir="$ROOT/build/sanitize-$1"
  mkdir -p "$dir/lib"
  # The Python package (without any in-place extension) next to the sanitized extension.
  rm -rf "$dir/lib/rebel"
  cp -r "$ROOT/rebel" "$dir/lib/rebel"
  find "$dir/lib/rebel" \( -name '_core*.so' -o -name __pycache__ \) -prune -exec rm -rf {} +
  # torch is kept out: its own libraries are not built for a preloaded sanitizer runtime.
  mkdir -p "$dir/lib/torch"
  echo 'raise ImportError("torch is not loaded under the sanitizers (scripts/sanitize.sh)")' >"$dir/lib/torch/__init__.py"
  REBEL_SANITIZE="$sanitize" nice -n 19 "$PYTHON" setup.py -q build_ext \
    --build-lib "$dir/lib" --build-temp "$dir/temp" >"$dir/build.log" 2>&1 || {
    cat "$dir/build.log" >&2
    echo "sanitize.sh: the $kind build failed" >&2
    return 1
  }
  echo "$dir/lib"
}

run_job() {  # run_job KIND
  local kind="$1" lib runtime start
  start=$(date +%s)
  case "$kind" in
    asan)
      lib=$(build asan address,undefined)
      runtime=$(g++ -print-file-name=libasan.so)
      # detect_leaks=0: CPython itself never frees some allocations at exit.
      env PYTHONPATH="$lib" LD_PRELOAD="$runtime" \
        ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1" \
        UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
        REBEL_SANITIZER=asan \
        nice -n 19 "$PYTHON" -m pytest -q -p no:cacheprovider -p no:benchmark "${ASAN_TESTS[@]}" \
        -k "not ($ASAN_DESELECT)" ${SANITIZE_PYTEST_ARGS:-}
      ;;
    tsan)
      lib=$(build tsan thread)
      runtime=$(g++ -print-file-name=libtsan.so)
      # setarch -R: TSan's fixed shadow layout clashes with the high mmap randomisation of
      # recent kernels ("unexpected memory mapping"); disabling ASLR for this process avoids it.
      env PYTHONPATH="$lib" LD_PRELOAD="$runtime" \
        TSAN_OPTIONS="halt_on_error=1:abort_on_error=1:second_deadlock_stack=1:report_signal_unsafe=0" \
        REBEL_SANITIZER=tsan \
        nice -n 19 setarch "$(uname -m)" -R "$PYTHON" -m pytest -q -p no:cacheprovider -p no:benchmark \
        "${TSAN_TESTS[@]}" -k "not ($TSAN_DESELECT)" ${SANITIZE_PYTEST_ARGS:-}
      ;;
    *)
      echo "sanitize.sh: unknown job '$kind' (asan or tsan)" >&2
      return 2
      ;;
  esac
  echo "sanitize.sh: $kind job clean in $(( $(date +%s) - start )) s (build and tests)"
}

for job in "${JOBS[@]}"; do run_job "$job"; done

#!/usr/bin/env bash
# Installs everything rebel needs into a virtual environment (.venv in the repository) and
# builds the C++ extension in place. Works with a distribution's own python3 (Debian 12,
# Ubuntu 24.04: no pip needed, PEP 668 respected: nothing is installed into the system
# interpreter). Safe to run again: a second run with no source change takes seconds.
#
#   bash scripts/install.sh [--openspiel] [--ray]
#
#   --openspiel        also install the optional OpenSpiel extra (pip install .[openspiel])
#   --ray              also install the optional Ray extra (pip install .[ray]: distributed self-play)
#   PYTHON=/path/py    the interpreter the venv is created from (default: python3)
#   REBEL_VENV=DIR     where the venv lives (default: .venv in the repository)
#
# Afterwards: .venv/bin/rebel, .venv/bin/python (or `source .venv/bin/activate`).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

PYTHON="${PYTHON:-python3}"
VENV="${REBEL_VENV:-$ROOT/.venv}"
EXTRAS=()
for arg in "$@"; do
  case "$arg" in
    --openspiel) EXTRAS+=(openspiel) ;;
    --ray) EXTRAS+=(ray) ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

# What gets installed into the venv. torch is pinned: on this project's machines the local
# wheel source serves the CPU build; elsewhere see the README ("CPU-only torch").
PACKAGES=(
  "torch==2.13.0"
  numpy omegaconf tqdm
  "pybind11>=2.12" setuptools wheel   # building the extension
  pytest hypothesis scipy             # the test suite (scipy: the exact LPs of the Theorem 1 check)
  eval7                               # the hand-rank tests' reference evaluator (tests/games/test_hand_rank.py)
  "ruff==0.17.6" "mypy==2.4.1"        # the lint and type checks (pinned: new releases add checks)
  "pybind11-stubgen==3.0.0"           # regenerates rebel/_core.pyi (scripts/gen_core_stub.py)
  tensorboard                         # training scalars (rebel train)
  matplotlib                          # the plots of experiments/
)
EXTRA_PACKAGES_openspiel=("open_spiel==2.0.2")
EXTRA_PACKAGES_ray=("ray==2.60.0")

step() { echo "install.sh: $*"; }

SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
APT_UPDATED=""
apt_install() {  # apt_install PACKAGE... (Debian/Ubuntu); fails with a clear message elsewhere
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "install.sh: please install: $* (no apt-get on this machine)" >&2
    exit 1
  fi
  if [ -z "$APT_UPDATED" ]; then $SUDO apt-get update -qq; APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}

if ! command -v "$PYTHON" >/dev/null 2>&1; then
  step "installing python3 (apt)"
  apt_install python3
fi
PYVER="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 9))'; then
  echo "install.sh: rebel needs Python >= 3.9; $PYTHON is $PYVER (set PYTHON=/path/to/python3)" >&2
  exit 1
fi

# A C++17 compiler and the Python headers (present on most images; installed if missing).
missing=()
command -v g++ >/dev/null 2>&1 || missing+=(g++)
"$PYTHON" -c "import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()['include'], 'Python.h')))" \
  || missing+=("python$PYVER-dev")
if [ "${#missing[@]}" -gt 0 ]; then
  step "installing ${missing[*]} (apt)"
  apt_install "${missing[@]}"
fi

# The virtual environment (created once; recreated if it is broken, e.g. its Python is gone).
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -m pip --version >/dev/null 2>&1; then
  step "creating the virtual environment $VENV from $PYTHON (Python $PYVER)"
  rm -rf "$VENV"
  if ! "$PYTHON" -m venv "$VENV" >/dev/null 2>&1; then
    # Debian/Ubuntu ship venv's ensurepip apart from python3, in python3.X-venv.
    rm -rf "$VENV"
    step "installing python$PYVER-venv (apt), which venv needs"
    apt_install "python$PYVER-venv"
    "$PYTHON" -m venv "$VENV"
  fi
else
  step "using the virtual environment $VENV"
fi
PY="$VENV/bin/python"
PIP=("$PY" -m pip install -q --disable-pip-version-check)

all=("${PACKAGES[@]}")
for extra in "${EXTRAS[@]}"; do
  ref="EXTRA_PACKAGES_${extra}[@]"
  all+=("${!ref}")
done
step "installing ${#all[@]} Python packages into the venv (torch is the big one: a minute or more the first time)"
"${PIP[@]}" --upgrade pip >/dev/null
"${PIP[@]}" "${all[@]}"

# The extension rebel._core, built in place, and rebel itself installed editable into the
# venv (the `rebel` command). setup.py rebuilds the extension only when a source, a header
# or the compiler flags changed, so a re-run without changes does not recompile.
if "$PY" -c "import rebel._core" >/dev/null 2>&1; then
  step "building the C++ extension if a source changed, installing rebel (editable)"
else
  step "building the C++ extension (about 70 s on 2 cores), installing rebel (editable)"
fi
"$PY" setup.py -q build_ext --inplace
"${PIP[@]}" --no-build-isolation --no-deps -e .
"$PY" -c "import sys, rebel; print('install.sh: rebel', rebel.__version__, 'is ready:', sys.argv[1] + '/bin/rebel')" "$VENV"

#!/usr/bin/env bash
# Installs everything rebel needs on a bare Debian machine with Python 3.9+ and builds the
# C++ extension in place (editable install). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

# A C++17 compiler and the Python headers (present on most images; installed if missing).
if ! command -v g++ >/dev/null 2>&1 || ! python3 -c "import sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()['include'], 'Python.h')))"; then
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq g++ python3-dev
  else
    echo "install.sh: please install a C++17 compiler and the Python headers" >&2
    exit 1
  fi
fi

PIP="python3 -m pip"
# torch is pinned: 2.13.0 resolves to the CPU build (an unpinned torch pulls GBs of CUDA).
$PIP install -q "torch==2.13.0"
# tensorboard: training scalars (rebel train); matplotlib: the plots of experiments/.
$PIP install -q numpy omegaconf tqdm pytest hypothesis "pybind11>=2.12" setuptools wheel tensorboard matplotlib
# The extension (rebel._core); --no-build-isolation reuses the pybind11 installed above.
$PIP install -q --no-build-isolation -e .
python3 -c "import rebel; print('rebel', rebel.__version__, 'installed from', rebel.__file__)"

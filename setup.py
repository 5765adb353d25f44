"""Builds the `rebel` package and its C++17 extension `rebel._core`.

The extension is pure C++ (no libtorch). Compiler flags are portable: no
-march=native; hot kernels pick AVX2/FMA at run time via function multiversioning.
"""
import glob
import os

from pybind11.setup_helpers import ParallelCompile, Pybind11Extension, build_ext
from setuptools import find_packages, setup

# Compile translation units in parallel (REBEL_BUILD_JOBS overrides the default of 2).
ParallelCompile("REBEL_BUILD_JOBS", default=2).install()

sources = sorted(glob.glob("csrc/**/*.cc", recursive=True))
# -ffp-contract=off: no FMA contraction, so every CPU clone (SSE, AVX2, AVX-512) rounds alike
# and results are the same on every x86-64 machine.
extra_compile_args = ["-O3", "-Wall", "-Wextra", "-Wno-unused-parameter", "-fvisibility=hidden", "-ffp-contract=off"]
extra_link_args = ["-pthread"]


def sanitizer_flags(sanitize: str, debug: bool) -> tuple:
    """Compile and link flags of a sanitizer build.

    REBEL_SANITIZE=address,undefined (ASan + UBSan) or thread (TSan): -O1 keeps the test
    subsets fast enough for CI, every report halts the process (-fno-sanitize-recover) and
    frame pointers give readable stacks. REBEL_DEBUG=1 (the older switch) is the same as
    REBEL_SANITIZE=address,undefined at -O0. See scripts/sanitize.sh, which runs them.
    """
    kinds = [k.strip() for k in sanitize.split(",") if k.strip()]
    allowed = {"address", "undefined", "thread"}
    if not kinds or not set(kinds) <= allowed or ("thread" in kinds and "address" in kinds):
        raise SystemExit(f"REBEL_SANITIZE must be 'address,undefined', 'address', 'undefined' or 'thread', got {sanitize!r}")
    flag = "-fsanitize=" + ",".join(kinds)
    compile_args = ["-O0" if debug else "-O1", "-g", "-fno-omit-frame-pointer", "-Wall", "-Wextra",
                    "-Wno-unused-parameter", "-ffp-contract=off", flag, "-fno-sanitize-recover=all"]
    return compile_args, ["-pthread", flag]


_sanitize = os.environ.get("REBEL_SANITIZE") or ("address,undefined" if os.environ.get("REBEL_DEBUG") else "")
if _sanitize:
    extra_compile_args, extra_link_args = sanitizer_flags(_sanitize, debug=bool(os.environ.get("REBEL_DEBUG")))

ext = Pybind11Extension(
    "rebel._core",
    sources,
    include_dirs=["csrc"],
    cxx_std=17,
    extra_compile_args=extra_compile_args,
    extra_link_args=extra_link_args,
)

setup(
    name="rebel",
    version="0.1.0",
    description="ReBeL: search plus learned public-belief-state values for two-player zero-sum games",
    packages=find_packages(include=["rebel", "rebel.*"]),
    ext_modules=[ext],
    cmdclass={"build_ext": build_ext},
    python_requires=">=3.9",
    install_requires=["numpy", "omegaconf", "tqdm"],
    extras_require={"train": ["torch", "tensorboard"], "plots": ["matplotlib"], "test": ["pytest", "hypothesis"]},
    entry_points={"console_scripts": ["rebel=rebel.cli:main"]},
    zip_safe=False,
)

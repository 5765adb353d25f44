"""Builds the `rebel` package, its C++17 extension `rebel._core` and the benchmarks' small
instrumentation extension `rebel._bench` (csrc/bench/).

The extension is pure C++ (no libtorch). Compiler flags are portable: no
-march=native; hot kernels pick AVX2/FMA at run time via function multiversioning.

Builds are incremental: the extension is rebuilt only when a source, a header or the
compiler flags changed since the in-place build (``rebel/_core*.so``), and an editable
install (``pip install -e .``) reuses an up-to-date in-place build instead of compiling.
"""
import glob
import json
import os
import shutil
import sys

from pybind11.setup_helpers import ParallelCompile, Pybind11Extension, build_ext
from setuptools import find_packages, setup

# Compile translation units in parallel (REBEL_BUILD_JOBS overrides the default of 2).
ParallelCompile("REBEL_BUILD_JOBS", default=2).install()

# rebel._core: every source but the benchmark instrumentation of csrc/bench/, which builds the
# separate rebel._bench (with the two sources its probes need).
BENCH_DIR = os.path.join("csrc", "bench", "")
sources = sorted(p for p in glob.glob("csrc/**/*.cc", recursive=True) if not p.startswith(BENCH_DIR))
bench_sources = sorted(glob.glob("csrc/bench/*.cc")) + ["csrc/util/cpu_features.cc", "csrc/nets/gemm_bf16.cc"]
# -ffp-contract=off: no FMA contraction, so every CPU clone (SSE, AVX2, AVX-512) rounds alike
# and results are the same on every x86-64 machine. -Wno-psabi: GCC's note that passing 32-byte
# vectors by value changed ABI in GCC 4.6 concerns calls across compilers; the vector helpers
# of csrc/solvers/cfr_update.cc are internal to this one extension, built by one compiler.
extra_compile_args = ["-O3", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-psabi", "-fvisibility=hidden",
                      "-ffp-contract=off"]
extra_link_args = ["-pthread"]
if sys.platform.startswith("linux"):
    # Keep any static archive's symbols (a libstdc++ linked statically by a toolchain that does
    # so by default, libgcc's CPU-feature data) private to the extension. Exported, they bind to
    # the copies of whatever libstdc++.so the process already loaded: on one machine whose CXX
    # linked libstdc++ statically, `Game.description()` (an ostringstream) crashed with SIGSEGV
    # in a locale facet of the other copy.
    extra_link_args.append("-Wl,--exclude-libs,ALL")


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
        raise SystemExit("REBEL_SANITIZE must be 'address,undefined', 'address', 'undefined' or 'thread', "
                         f"got {sanitize!r}")
    flag = "-fsanitize=" + ",".join(kinds)
    compile_args = ["-O0" if debug else "-O1", "-g", "-fno-omit-frame-pointer", "-Wall", "-Wextra",
                    "-Wno-unused-parameter", "-Wno-psabi", "-ffp-contract=off", flag, "-fno-sanitize-recover=all"]
    return compile_args, ["-pthread", flag]


_sanitize = os.environ.get("REBEL_SANITIZE") or ("address,undefined" if os.environ.get("REBEL_DEBUG") else "")
if _sanitize:
    extra_compile_args, extra_link_args = sanitizer_flags(_sanitize, debug=bool(os.environ.get("REBEL_DEBUG")))

def extension(name: str, ext_sources: list) -> Pybind11Extension:
    """One C++17 extension of the package, with the flags above."""
    return Pybind11Extension(
        name,
        ext_sources,
        depends=sorted(glob.glob("csrc/**/*.h", recursive=True)),
        include_dirs=["csrc"],
        cxx_std=17,
        # Copies: Pybind11Extension adds its own flags to the list it is given.
        extra_compile_args=list(extra_compile_args),
        extra_link_args=list(extra_link_args),
    )


ext = extension("rebel._core", sources)
# Benchmark instrumentation (peak arithmetic rates of a core), kept out of the shipped _core.
bench_ext = extension("rebel._bench", bench_sources)

HERE = os.path.dirname(os.path.abspath(__file__))


class IncrementalBuildExt(build_ext):
    """build_ext that skips an up-to-date extension and reuses the in-place build.

    Up to date means: the in-place ``.so`` is newer than every source and header, and it
    was built with the same compiler flags (recorded next to it in ``build/``), so
    switching e.g. ``REBEL_DEBUG`` on or off rebuilds.
    """

    def run(self):
        # setuptools builds an --inplace extension in build/lib and copies it into the source
        # tree afterwards (self.inplace is 0 while build_extension runs): remember the option.
        self._copies_to_source = bool(self.inplace)
        super().run()

    def _flags_stamp(self, ext):
        return os.path.join(HERE, "build", ext.name + ".flags.json")

    def _signature(self, ext):
        return json.dumps({"compile": ext.extra_compile_args, "link": ext.extra_link_args,
                           "ext": self.get_ext_filename(ext.name)})

    def build_extension(self, ext):
        inplace = os.path.join(HERE, self.get_ext_filename(ext.name))
        target = self.get_ext_fullpath(ext.name)
        stamp = self._flags_stamp(ext)
        try:
            with open(stamp) as f:
                same_flags = f.read() == self._signature(ext)
        except OSError:
            same_flags = False
        inputs = [os.path.join(HERE, p) for p in list(ext.sources) + list(ext.depends)]
        up_to_date = (not self.force and same_flags and os.path.exists(inplace)
                      and all(os.path.getmtime(p) <= os.path.getmtime(inplace) for p in inputs))
        if up_to_date:
            print(f"{ext.name} is up to date (no source, header or flag changed)")
            if os.path.abspath(target) != inplace:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copy2(inplace, target)
            return
        self.force = True  # flags or inputs changed: the whole extension is rebuilt
        super().build_extension(ext)
        # The stamp describes the in-place .so only: a build elsewhere (e.g. the sanitizer
        # builds of scripts/sanitize.sh, --build-lib build/sanitize-*) must not record its
        # flags, or a later build with those flags would copy the in-place .so instead.
        if getattr(self, "_copies_to_source", False) or os.path.abspath(target) == inplace:
            os.makedirs(os.path.dirname(stamp), exist_ok=True)
            with open(stamp, "w") as f:
                f.write(self._signature(ext))


setup(
    name="rebel",
    version="0.1.0",
    description="ReBeL: search plus learned public-belief-state values for two-player zero-sum games",
    packages=find_packages(include=["rebel", "rebel.*"]),
    # Package data: type information (the C++ core's stub included), the shipped configs
    # (rebel train NAME) and the shipped nets (rebel pretrained).
    package_data={"rebel": ["py.typed", "_core.pyi", "configs/*.yaml", "configs/spots/*.yaml"],
                  "rebel.nets.pretrained": ["index.json", "*.bin"]},
    ext_modules=[ext, bench_ext],
    cmdclass={"build_ext": IncrementalBuildExt},
    python_requires=">=3.9",
    install_requires=["numpy", "omegaconf", "tqdm"],
    extras_require={"train": ["torch", "tensorboard"], "plots": ["matplotlib"],
                    "test": ["pytest", "hypothesis", "scipy", "eval7", "matplotlib"],
                    "openspiel": ["open_spiel>=2.0.2"],
                    # distributed self-play and evaluation (selfplay.backend=ray, rebel eval --backend ray)
                    "ray": ["ray>=2.40"]},
    license="MIT",
    license_files=["LICENSE"],
    entry_points={"console_scripts": ["rebel=rebel.cli:main"]},
    zip_safe=False,
)

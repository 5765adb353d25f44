// Entry point of the rebel._bench extension: benchmark instrumentation, kept out of the shipped
// rebel._core. Built by setup.py from csrc/bench/ (with the CPU-feature query and the AMX tile
// set-up it needs); benchmarks/_machine.py uses it for the "fraction of peak" figures.
#include <pybind11/pybind11.h>

#include <string>

#include "bench/peak_probe.h"

namespace py = pybind11;

PYBIND11_MODULE(_bench, m) {
  m.doc() = "rebel benchmark instrumentation: measured peak arithmetic rates of one core";
  m.def("peak_probe", [](const std::string& kind, double seconds) {
        py::gil_scoped_release release;
        return rebel::peak_probe_flops(kind, seconds);
      }, py::arg("kind"), py::arg("seconds") = 0.2,
      "Measured flops/s of one core's multiply-add units (fma512, fma256, dpbf16, amx, dpwssd), or its clock in "
      "cycles/s (clock).");
}

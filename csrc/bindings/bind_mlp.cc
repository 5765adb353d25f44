// Python bindings: the native MLP value net (rebel._core.MlpValueNet).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>

#include "bindings/common.h"
#include "core/game.h"
#include "nets/mlp.h"

namespace rebel_bindings {

using namespace rebel;

namespace {

bool is_bytes_like(const py::handle& obj) {
  return py::isinstance<py::bytes>(obj) || PyByteArray_Check(obj.ptr()) || PyMemoryView_Check(obj.ptr());
}

// Decodes and packs weights given as bytes-like data; the GIL is released while packing.
MlpWeightsPtr weights_from_bytes(const py::handle& data, const GemmKernel& kernel) {
  if (!is_bytes_like(data)) {
    throw py::type_error("weights data must be bytes, bytearray or memoryview, got " +
                         std::string(py::str(py::type::of(data).attr("__name__"))));
  }
  // bytes(...) copies bytearray / memoryview contents, so later mutation cannot race.
  const std::string copy = py::isinstance<py::bytes>(data) ? data.cast<std::string>()
                                                             : py::bytes(py::module_::import("builtins").attr("bytes")(data)).cast<std::string>();
  py::gil_scoped_release release;
  return load_mlp_weights(reinterpret_cast<const uint8_t*>(copy.data()), copy.size(), kernel);
}

MlpWeightsPtr weights_from_path(const py::handle& path, const GemmKernel& kernel) {
  std::string p;
  try {
    p = py::module_::import("os").attr("fsdecode")(path).cast<std::string>();
  } catch (const py::error_already_set& e) {
    if (!e.matches(PyExc_TypeError)) throw;
    throw py::type_error("weights must be a file path (str or os.PathLike) or bytes-like data, got " +
                         std::string(py::str(py::type::of(path).attr("__name__"))));
  }
  py::gil_scoped_release release;
  return load_mlp_weights_file(p, kernel);
}

MlpWeightsPtr weights_from_source(const py::handle& source, const GemmKernel& kernel) {
  return is_bytes_like(source) ? weights_from_bytes(source, kernel) : weights_from_path(source, kernel);
}

}  // namespace

void bind_mlp(py::module_& m) {
  py::register_local_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const WeightsFileError& e) {
      // OSError(errno, message, filename) picks the subclass, e.g. FileNotFoundError.
      py::object exc = py::handle(PyExc_OSError)(e.error_code(), e.what(), e.path());
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
    }
  });

  m.def("mlp_supported_isas", &supported_isas,
        "Instruction sets the native MLP kernels can use on this CPU, fastest first.");

  py::class_<MlpValueNet, ValueNet, std::shared_ptr<MlpValueNet>>(m, "MlpValueNet", R"doc(
Native (C++, float32) evaluation of rebel.model.ValueMLP as a solver value net.

MlpValueNet(game, weights, isa="auto"): `weights` is a weights file path (str or
os.PathLike) or the file's bytes (bytes, bytearray, memoryview); see
docs/weights_format.md. The net's input size must be game.query_size and its output size
game.num_hands. Malformed weights raise ValueError, unreadable files OSError. `isa` picks
the kernels ("auto", "avx512", "avx2", "generic"; see mlp_supported_isas()).

Weights can be replaced while solver threads evaluate (load / set_weights_bytes): each
batch runs with the weights it started with.)doc")
      .def(py::init([](const std::shared_ptr<Game>& game, const py::object& weights, const std::string& isa) {
             const Game& g = require(game, "game");
             return std::make_shared<MlpValueNet>(g, weights_from_source(weights, gemm_kernel(isa)));
           }),
           py::arg("game"), py::arg("weights"), py::arg("isa") = "auto")
      .def("load", [](MlpValueNet& net, const py::object& path) {
        net.set_weights(weights_from_path(path, net.weights()->kernel()));
      }, py::arg("path"), "Replaces the weights with those of a file (atomic swap).")
      .def("set_weights_bytes", [](MlpValueNet& net, const py::object& data) {
        net.set_weights(weights_from_bytes(data, net.weights()->kernel()));
      }, py::arg("data"), "Replaces the weights with serialized ones (atomic swap).")
      .def("forward", [](const MlpValueNet& net, const py::object& x) {
        const auto in = require_float32_array(x, {-1, net.input_size()}, "x");
        const py::ssize_t batch = in.shape(0);
        py::array_t<float> out({batch, static_cast<py::ssize_t>(net.output_size())});
        float* dst = out.mutable_data();
        {
          py::gil_scoped_release release;
          net.forward(in.data(), static_cast<long>(batch), dst);
        }
        return out;
      }, py::arg("x"), "float32 [batch, query_size] -> float32 [batch, num_hands]; the GIL is released.")
      .def_property_readonly("input_size", &MlpValueNet::input_size)
      .def_property_readonly("output_size", &MlpValueNet::output_size)
      .def_property_readonly("hidden_size", [](const MlpValueNet& n) { return n.weights()->shape().hidden_size; })
      .def_property_readonly("num_layers", [](const MlpValueNet& n) { return n.weights()->shape().num_layers; })
      .def_property_readonly("layer_norm_eps", [](const MlpValueNet& n) { return n.weights()->shape().layer_norm_eps; })
      .def_property_readonly("isa", [](const MlpValueNet& n) { return std::string(n.weights()->kernel().isa); })
      .def("__repr__", [](const MlpValueNet& n) {
        const MlpWeightsPtr w = n.weights();
        return "MlpValueNet(" + n.game_description() + ", layers=" + std::to_string(w->shape().num_layers) +
               ", hidden=" + std::to_string(w->shape().hidden_size) + ", isa=" + w->kernel().isa + ")";
      });
}

}  // namespace rebel_bindings

// Python bindings: the native MLP value net (rebel._core.MlpValueNet).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "bindings/common.h"
#include "core/game.h"
#include "nets/activations.h"
#include "nets/conv_net.h"
#include "nets/mlp.h"
#include "nets/policy_nets.h"
#include "util/cpu_features.h"

namespace rebel_bindings {

using namespace rebel;

namespace {

bool is_bytes_like(const py::handle& obj) {
  return py::isinstance<py::bytes>(obj) || PyByteArray_Check(obj.ptr()) || PyMemoryView_Check(obj.ptr());
}

// Decodes and packs weights given as bytes-like data; the GIL is released while packing.
MlpWeightsPtr weights_from_bytes(const py::handle& data, const MlpKernels& kernel) {
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

MlpWeightsPtr weights_from_path(const py::handle& path, const MlpKernels& kernel) {
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

MlpWeightsPtr weights_from_source(const py::handle& source, const MlpKernels& kernel) {
  return is_bytes_like(source) ? weights_from_bytes(source, kernel) : weights_from_path(source, kernel);
}

// One (weight [out][in], bias [out]) float32 pair of a conv net's layers.
DenseParams dense_from_pair(const py::handle& pair, const std::string& name) {
  if (!py::isinstance<py::tuple>(pair) && !py::isinstance<py::list>(pair)) {
    throw py::type_error("conv net layer '" + name + "' must be a (weight, bias) pair");
  }
  const py::sequence seq = py::reinterpret_borrow<py::sequence>(pair);
  if (py::len(seq) != 2) throw py::value_error("conv net layer '" + name + "' must be a (weight, bias) pair");
  const auto w = require_float32_array(seq[0], {-1, -1}, name + " weight");
  const auto b = require_float32_array(seq[1], {w.shape(0)}, name + " bias");
  DenseParams d;
  d.out = static_cast<int>(w.shape(0));
  d.in = static_cast<int>(w.shape(1));
  d.weight.assign(w.data(), w.data() + w.size());
  d.bias.assign(b.data(), b.data() + b.size());
  return d;
}

ConvNetParams conv_params_from_dict(int m, int n, int planes, const py::dict& layers) {
  static const std::vector<std::string> keys = {"stem", "convs", "policy_conv", "policy_fc", "value_conv",
                                                "value_fc1", "value_fc2"};
  for (const auto& item : layers) {
    const std::string key = py::str(item.first);
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) throw py::value_error("conv net: unknown layer '" + key + "'");
  }
  for (const std::string& key : keys) {
    if (!layers.contains(key)) throw py::value_error("conv net: layer '" + key + "' is missing");
  }
  ConvNetParams p;
  p.m = m;
  p.n = n;
  p.planes = planes;
  p.stem = dense_from_pair(layers["stem"], "stem");
  const py::object convs = layers["convs"];
  if (!py::isinstance<py::list>(convs) && !py::isinstance<py::tuple>(convs)) {
    throw py::type_error("conv net: 'convs' must be a list of (weight, bias) pairs");
  }
  int i = 0;
  for (const py::handle& c : convs) p.convs.push_back(dense_from_pair(c, "convs[" + std::to_string(i++) + "]"));
  p.policy_conv = dense_from_pair(layers["policy_conv"], "policy_conv");
  p.policy_fc = dense_from_pair(layers["policy_fc"], "policy_fc");
  p.value_conv = dense_from_pair(layers["value_conv"], "value_conv");
  p.value_fc1 = dense_from_pair(layers["value_fc1"], "value_fc1");
  p.value_fc2 = dense_from_pair(layers["value_fc2"], "value_fc2");
  return p;
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
        "fp32 instruction sets the native MLP kernels can use on this CPU, fastest first.");
  m.def("mlp_supported_bf16_isas", &supported_bf16_isas,
        "bf16 kernels (amx, avx512bf16) this CPU can run, fastest first; empty where it has none.");
  m.def("_bf16_linear", [](const py::object& x, const py::object& w, const py::object& b, const std::string& isa) {
        const auto wa = require_float32_array(w, {-1, -1}, "weight");
        const int out = static_cast<int>(wa.shape(0)), in = static_cast<int>(wa.shape(1));
        const auto xa = require_float32_array(x, {-1, in}, "x");
        const auto ba = require_float32_array(b, {out}, "bias");
        const Bf16Linear layer(bf16_kernel(isa), wa.data(), ba.data(), out, in);
        const long rows = static_cast<long>(xa.shape(0));
        py::array_t<float> result({static_cast<py::ssize_t>(rows), static_cast<py::ssize_t>(out)});
        float* dst = result.mutable_data();
        {
          py::gil_scoped_release release;
          AlignedBf16 a(static_cast<size_t>(kBf16BlockRows) * layer.padded_in());
          AlignedFloats y(static_cast<size_t>(kBf16BlockRows) * layer.padded_out());
          const Bf16Scope scope(layer.kernel());
          for (long r0 = 0; r0 < rows; r0 += kBf16BlockRows) {
            const int n = static_cast<int>(std::min<long>(kBf16BlockRows, rows - r0));
            rows_to_bf16_avx512(xa.data() + r0 * in, in, n, in, a.data(), layer.padded_in(), kBf16BlockRows);
            layer.forward(a.data(), n, y.data(), layer.padded_out());
            for (int r = 0; r < n; ++r) std::copy_n(y.data() + static_cast<long>(r) * layer.padded_out(), out, dst + (r0 + r) * out);
          }
        }
        return result;
      }, py::arg("x"), py::arg("weight"), py::arg("bias"), py::arg("isa") = "auto",
      "Test hook: one hidden Linear layer through a bf16 kernel, x float32 [rows, in], weight [out, in], "
      "bias [out] -> [rows, out] (inputs and weights rounded to bf16, sums in float32).");
  m.def("mlp_supported_int16_isas", &supported_int16_isas,
        "int16 kernels (avx512vnni) this CPU can run; empty where it has none.");
  m.def("mlp_int16_preferred", [] { return cpu_features().int16_faster; },
        "Whether precision 'auto' picks int16 on this CPU (AVX512_VNNI and no faster bf16 kernel).");
  m.def("_int16_linear", [](const py::object& x, const py::object& w, const py::object& b, const std::string& isa) {
        const auto wa = require_float32_array(w, {-1, -1}, "weight");
        const int out = static_cast<int>(wa.shape(0)), in = static_cast<int>(wa.shape(1));
        const auto xa = require_float32_array(x, {-1, in}, "x");
        const auto ba = require_float32_array(b, {out}, "bias");
        const Int16Linear layer(int16_kernel(isa), wa.data(), ba.data(), out, in);
        const long rows = static_cast<long>(xa.shape(0));
        py::array_t<float> result({static_cast<py::ssize_t>(rows), static_cast<py::ssize_t>(out)});
        float* dst = result.mutable_data();
        {
          py::gil_scoped_release release;
          AlignedInt16 a(static_cast<size_t>(kInt16BlockRows) * layer.padded_in());
          AlignedFloats scale(kInt16BlockRows);
          AlignedFloats y(static_cast<size_t>(kInt16BlockRows) * layer.padded_out());
          for (long r0 = 0; r0 < rows; r0 += kInt16BlockRows) {
            const int n = static_cast<int>(std::min<long>(kInt16BlockRows, rows - r0));
            quantize_rows_int16(xa.data() + r0 * in, in, n, in, layer.qmax(), a.data(), layer.padded_in(), scale.data(),
                                kInt16BlockRows);
            layer.forward(a.data(), scale.data(), n, y.data(), layer.padded_out());
            for (int r = 0; r < n; ++r) std::copy_n(y.data() + static_cast<long>(r) * layer.padded_out(), out, dst + (r0 + r) * out);
          }
        }
        return result;
      }, py::arg("x"), py::arg("weight"), py::arg("bias"), py::arg("isa") = "auto",
      "Test hook: one hidden Linear layer through the int16 kernel, x float32 [rows, in], weight [out, in], "
      "bias [out] -> [rows, out] (weights and each row of x quantised to int16, exact int32 sums).");
  m.def("_int16_qmax", &int16_qmax, py::arg("inputs"), "The largest |q| of an int16 layer with this many inputs.");
  m.def("mlp_bf16_preferred", [] { return cpu_features().bf16_faster; },
        "Whether precision 'auto' picks bf16 on this CPU (a bf16 kernel faster than fp32 here).");
  m.def("bf16_round", [](const py::object& x, const std::string& path) {
        const auto in = require_float32_array(x, {-1}, "x");
        const int n = static_cast<int>(in.shape(0));
        py::array_t<float> out(n);
        float* dst = out.mutable_data();
        if (path == "scalar") {
          for (int i = 0; i < n; ++i) dst[i] = bf16_to_float(float_to_bf16(in.data()[i]));
          return out;
        }
        if (path != "integer_ops" && path != "instruction")
          throw std::invalid_argument("unknown bf16 rounding path '" + path +
                                      "' (expected scalar, integer_ops or instruction)");
        const CpuFeatures& f = cpu_features();
        // Both vector paths need AVX-512 F/BW/VL, which either narrow kernel's feature implies.
        if (!(f.avx512bf16 || f.avx512vnni))
          throw std::invalid_argument("bf16 rounding path '" + path + "' needs AVX-512 F/BW/VL, which this CPU lacks");
        const Bf16Rounding rounding = path == "instruction" ? Bf16Rounding::kInstruction : Bf16Rounding::kIntegerOps;
        std::vector<uint16_t> bits(static_cast<size_t>(std::max(n, 1)));
        if (n > 0) rows_to_bf16_avx512(in.data(), n, 1, n, bits.data(), n, 1, rounding);
        for (int i = 0; i < n; ++i) dst[i] = bf16_to_float(bits[static_cast<size_t>(i)]);
        return out;
      }, py::arg("x"), py::arg("path") = "scalar",
      "float32 [n] rounded to bfloat16 (nearest even, denormals to +-0) as the bf16 kernels round, back in "
      "float32. path: 'scalar' (portable C++), 'integer_ops' (AVX-512 integer operations) or 'instruction' "
      "(VCVTNEPS2BF16, needs AVX512_BF16): the same bits; the kernels use the fastest this CPU has.");

  m.def("_layer_norm_gelu", [](const py::object& x, const py::object& gamma, const py::object& beta, float eps,
                               const std::string& fit) {
        const auto in = require_float32_array(x, {-1, -1}, "x");
        const int rows = static_cast<int>(in.shape(0)), n = static_cast<int>(in.shape(1));
        const auto g = require_float32_array(gamma, {n}, "gamma");
        const auto b = require_float32_array(beta, {n}, "beta");
        if (fit != "portable" && fit != "float32" && fit != "bf16" && fit != "bf16_doubled")
          throw std::invalid_argument("unknown fit '" + fit + "' (expected portable, float32, bf16 or bf16_doubled)");
        const CpuFeatures& f = cpu_features();
        if (fit != "portable" && !(f.avx512bf16 || f.avx512vnni))
          throw std::invalid_argument("fit '" + fit + "' runs in AVX-512 F/BW/VL, which this CPU lacks");
        py::array_t<float> out({rows, n});
        std::copy_n(in.data(), static_cast<size_t>(rows) * n, out.mutable_data());
        if (rows == 0 || n == 0) return out;
        if (fit == "portable") {
          layer_norm_gelu(out.mutable_data(), n, rows, n, g.data(), b.data(), eps);
        } else {
          const GeluFit f = fit == "bf16" ? GeluFit::kBf16 : fit == "bf16_doubled" ? GeluFit::kBf16Doubled
                                                                                    : GeluFit::kFloat32;
          layer_norm_gelu_avx512(out.mutable_data(), n, rows, n, g.data(), b.data(), eps, nullptr, 0, 0, f);
        }
        return out;
      }, py::arg("x"), py::arg("gamma"), py::arg("beta"), py::arg("eps") = 1e-5f, py::arg("fit") = "portable",
      "Test hook: LayerNorm + GELU over the rows of x float32 [rows, n] as the net's kernels compute it, "
      "result in float32. fit: 'portable' (the fp32 path), 'float32' (the int16 path's AVX-512 code), "
      "'bf16' (the bf16 path's cheaper fit) or 'bf16_doubled' (the same times 2, as the bf16 net runs it; "
      "the last three AVX-512 F/BW/VL).");

  m.def("_layer_norm_gelu_head", [](const py::object& x, const py::object& gamma, const py::object& beta,
                                    const py::object& w, const py::object& bias, float eps, bool doubled) {
        const auto in = require_float32_array(x, {-1, -1}, "x");
        const int rows = static_cast<int>(in.shape(0)), n = static_cast<int>(in.shape(1));
        const auto g = require_float32_array(gamma, {n}, "gamma");
        const auto b = require_float32_array(beta, {n}, "beta");
        const auto wa = require_float32_array(w, {-1, n}, "w");
        const int outputs = static_cast<int>(wa.shape(0));
        const auto ba = require_float32_array(bias, {outputs}, "bias");
        const CpuFeatures& f = cpu_features();
        if (!(f.avx512bf16 || f.avx512vnni))
          throw std::invalid_argument("the fused head runs in AVX-512 F/BW/VL, which this CPU lacks");
        if (outputs < 1 || outputs > kFusedHeadMaxOutputs || n < 1)
          throw std::invalid_argument("w must have 1 to " + std::to_string(kFusedHeadMaxOutputs) +
                                      " rows and at least one column");
        py::array_t<float> out({rows, outputs});
        if (rows > 0)
          layer_norm_gelu_head_avx512(in.data(), n, rows, n, g.data(), b.data(), eps,
                                      doubled ? GeluFit::kBf16Doubled : GeluFit::kBf16, wa.data(), ba.data(), outputs,
                                      out.mutable_data());
        return out;
      }, py::arg("x"), py::arg("gamma"), py::arg("beta"), py::arg("w"), py::arg("bias"), py::arg("eps") = 1e-5f,
      py::arg("doubled") = false,
      "Test hook: the bf16 path's last LayerNorm + GELU with the head fused in: bias + GELU(LN(x)) w^T for x "
      "float32 [rows, n], w [outputs <= 16, n]. doubled: the GELU runs doubled (pass w halved, as the net does).");

  py::class_<MlpValueNet, ValueNet, std::shared_ptr<MlpValueNet>>(m, "MlpValueNet", R"doc(
Native (C++) evaluation of rebel.model.ValueMLP as a solver value net.

MlpValueNet(game, weights, isa="auto", precision="fp32"): `weights` is a weights file path
(str or os.PathLike) or the file's bytes (bytes, bytearray, memoryview); see
docs/weights_format.md. The net's input size must be game.query_size and its output size
game.num_hands. Malformed weights raise ValueError, unreadable files OSError.
`precision` is "fp32", "bf16" (the products of the hidden-to-hidden layers in bf16 with
float32 accumulation; the first layer, LayerNorm, GELU and the head in float32;
ValueError on a CPU without AMX-BF16 or AVX512_BF16), "int16" (those layers' weights and
inputs quantised to int16 with a float32 scale per row, exact int32 sums; ValueError on a
CPU without AVX512_VNNI) or "auto" (bf16 where it is faster here, else int16 where this
CPU has VNNI, else fp32). `isa` picks the kernel of that precision ("auto"; fp32: "avx512",
"avx2", "generic", see mlp_supported_isas(); bf16: "amx", "avx512bf16", see
mlp_supported_bf16_isas(); int16: "avx512vnni").

Weights can be replaced while solver threads evaluate (load / set_weights_bytes): each
batch runs with the weights it started with.)doc")
      .def(py::init([](const std::shared_ptr<Game>& game, const py::object& weights, const std::string& isa,
                       const std::string& precision) {
             const Game& g = require(game, "game");
             return std::make_shared<MlpValueNet>(g, weights_from_source(weights, mlp_kernels(precision, isa)));
           }),
           py::arg("game"), py::arg("weights"), py::arg("isa") = "auto", py::arg("precision") = "fp32")
      .def("load", [](MlpValueNet& net, const py::object& path) {
        net.set_weights(weights_from_path(path, net.weights()->kernels()));
      }, py::arg("path"), "Replaces the weights with those of a file (atomic swap).")
      .def("set_weights_bytes", [](MlpValueNet& net, const py::object& data) {
        net.set_weights(weights_from_bytes(data, net.weights()->kernels()));
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
      .def_property_readonly("isa", [](const MlpValueNet& n) { return std::string(n.weights()->kernels().isa()); })
      .def_property_readonly("precision", [](const MlpValueNet& n) {
        return std::string(n.weights()->kernels().precision());
      })
      .def("__repr__", [](const MlpValueNet& n) {
        const MlpWeightsPtr w = n.weights();
        return "MlpValueNet(" + n.game_description() + ", layers=" + std::to_string(w->shape().num_layers) +
               ", hidden=" + std::to_string(w->shape().hidden_size) + ", precision=" + w->kernels().precision() + ", isa=" + w->kernels().isa() + ")";
      });

  py::class_<MlpPolicyNet, PolicyNet, std::shared_ptr<MlpPolicyNet>>(m, "MlpPolicyNet", R"doc(
Native (C++) MLP policy net: the weights of a rebel.nets.value_mlp.ValueMLP(query_size,
num_hands * num_actions), same file format as MlpValueNet's, whose outputs are logits laid
out [hand][action]; the answer is their softmax over the legal actions (in double; illegal
actions exactly 0).

MlpPolicyNet(game, weights, isa="auto", precision="fp32"): `weights` as for MlpValueNet
(a path or bytes). Weights of the wrong sizes (another game's, a value net's) raise
ValueError naming them.)doc")
      .def(py::init([](const std::shared_ptr<Game>& game, const py::object& weights, const std::string& isa,
                       const std::string& precision) {
             require(game, "game");
             return std::make_shared<MlpPolicyNet>(game, weights_from_source(weights, mlp_kernels(precision, isa)));
           }),
           py::arg("game"), py::arg("weights"), py::arg("isa") = "auto", py::arg("precision") = "fp32")
      .def("set_weights_bytes", [](MlpPolicyNet& net, const py::object& data) {
        net.set_weights(weights_from_bytes(data, net.weights()->kernels()));
      }, py::arg("data"), "Replaces the weights with serialized ones (atomic swap).")
      .def_property_readonly("input_size", &MlpPolicyNet::input_size)
      .def_property_readonly("output_size", &MlpPolicyNet::output_size)
      .def_property_readonly("num_actions", &MlpPolicyNet::num_actions)
      .def("__repr__", [](const MlpPolicyNet& n) {
        const MlpWeightsPtr w = n.weights();
        return "MlpPolicyNet(" + n.game().description() + ", layers=" + std::to_string(w->shape().num_layers) +
               ", hidden=" + std::to_string(w->shape().hidden_size) + ", precision=" + w->kernels().precision() +
               ", isa=" + w->kernels().isa() + ")";
      });

  py::class_<ConvPolicyValueNet, std::shared_ptr<ConvPolicyValueNet>>(m, "ConvPolicyValueNet", R"doc(
Native (C++) forward pass of the AlphaZero policy-value net (rebel.alphazero.net.PolicyValueNet),
built by rebel.alphazero.native.NativeNet from a torch net with its BatchNorms folded in.

ConvPolicyValueNet(m, n, planes, layers, precision="auto", isa="auto"): `layers` maps
"stem", "convs" (a list, two per residual block), "policy_conv", "policy_fc", "value_conv",
"value_fc1" and "value_fc2" to (weight float32 [out, in], bias float32 [out]) pairs, the 3x3
convolutions as Linear layers on im2col rows (tap-major, then channel), the heads' inputs
cell-major. `precision`/`isa` as for MlpValueNet, without int16 (ValueError): "bf16" runs the
residual blocks' convolutions with bf16 products and float32 sums; "auto" is bf16 or fp32.
Inconsistent layers raise ValueError.)doc")
      .def(py::init([](int m, int n, int planes, const py::dict& layers, const std::string& precision,
                       const std::string& isa) {
             return std::make_shared<ConvPolicyValueNet>(conv_params_from_dict(m, n, planes, layers),
                                                         mlp_kernels(precision, isa, /*allow_int16=*/false));
           }),
           py::arg("m"), py::arg("n"), py::arg("planes"), py::arg("layers"), py::arg("precision") = "auto",
           py::arg("isa") = "auto")
      .def("forward", [](const ConvPolicyValueNet& net, const py::object& x, int threads) {
        const auto in = require_float32_array(x, {-1, net.planes(), net.m(), net.n()}, "planes");
        if (threads < 1) throw py::value_error("threads must be >= 1, got " + std::to_string(threads));
        const py::ssize_t batch = in.shape(0);
        py::array_t<float> priors({batch, static_cast<py::ssize_t>(net.m() * net.n())});
        py::array_t<float> values(batch);
        float* p = priors.mutable_data();
        float* v = values.mutable_data();
        {
          py::gil_scoped_release release;
          net.forward(in.data(), static_cast<long>(batch), p, v, threads);
        }
        return py::make_tuple(priors, values);
      }, py::arg("planes"), py::arg("threads") = 1,
      "float32 [batch, planes, m, n] -> (priors float32 [batch, m * n], values float32 [batch]); the GIL is released.")
      .def_property_readonly("m", &ConvPolicyValueNet::m)
      .def_property_readonly("n", &ConvPolicyValueNet::n)
      .def_property_readonly("planes", &ConvPolicyValueNet::planes)
      .def_property_readonly("channels", &ConvPolicyValueNet::channels)
      .def_property_readonly("blocks", &ConvPolicyValueNet::blocks)
      .def_property_readonly("precision", [](const ConvPolicyValueNet& n) { return std::string(n.kernels().precision()); })
      .def_property_readonly("isa", [](const ConvPolicyValueNet& n) { return std::string(n.kernels().isa()); })
      .def("__repr__", [](const ConvPolicyValueNet& n) {
        return "ConvPolicyValueNet(" + std::to_string(n.m()) + "x" + std::to_string(n.n()) + ", channels=" +
               std::to_string(n.channels()) + ", blocks=" + std::to_string(n.blocks()) + ", precision=" +
               n.kernels().precision() + ", isa=" + n.kernels().isa() + ")";
      });
}

}  // namespace rebel_bindings

#include "nets/mlp.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <type_traits>

#include "nets/activations.h"
#include "util/denormals.h"
#include "util/cpu_features.h"

namespace rebel {

namespace {

// Rows evaluated through the whole network before moving on: the activations of a block
// stay in L1 between layers while the weights stream from L2 (8 to 32 measured alike).
constexpr int kTargetRowBlock = 16;
// Heads with at most this many outputs use dot products rather than padded panels.
constexpr int kSmallHeadMaxOutputs = 16;
static_assert(kSmallHeadMaxOutputs <= kFusedHeadMaxOutputs, "the bf16 path fuses every small head");

struct Scratch {
  AlignedFloats act[2];
  AlignedBf16 act16;          // a hidden layer's input rounded to bf16
  AlignedInt16 actq;          // a hidden layer's input quantised to int16 ...
  AlignedFloats actq_scale;   // ... and its rows' scales
  std::vector<float> values;  // float outputs before widening to double
};

Scratch& thread_scratch() {
  thread_local Scratch scratch;
  return scratch;
}

template <class V>
void ensure_size(V& v, size_t n) {
  if (v.size() < n) v.resize(n);
}

std::variant<SmallLinear, PackedLinear> make_head(const DenseParams& d, const GemmKernel& kernel) {
  if (d.out <= kSmallHeadMaxOutputs) return SmallLinear(d.weight.data(), d.bias.data(), d.out, d.in);
  return PackedLinear(kernel, d.weight.data(), d.bias.data(), d.out, d.in);
}

// With bf16 or int16, the first layer stays float32: its inputs are the query's beliefs,
// which bf16's 8-bit significand would blur (on the trained 1x4f net that alone moved values
// by up to 0.05), and it is a small share of the work (query_size x hidden of hidden x hidden).
// A bf16 layer reads the LayerNorm + GELU before it doubled (GeluFit::kBf16Doubled), so its
// weights are packed halved.
std::variant<PackedLinear, Bf16Linear, Int16Linear> make_hidden(const DenseParams& d, const MlpKernels& kernels,
                                                                bool first) {
  if (kernels.bf16 && !first) return Bf16Linear(*kernels.bf16, d.weight.data(), d.bias.data(), d.out, d.in, 0.5f);
  if (kernels.int16 && !first) return Int16Linear(*kernels.int16, d.weight.data(), d.bias.data(), d.out, d.in);
  return PackedLinear(*kernels.fp32, d.weight.data(), d.bias.data(), d.out, d.in);
}

int padded_out(const std::variant<PackedLinear, Bf16Linear, Int16Linear>& linear) {
  return std::visit([](const auto& l) { return l.padded_out(); }, linear);
}

}  // namespace

MlpKernels mlp_kernels(const std::string& precision, const std::string& isa, bool allow_int16) {
  const auto is_fp32_isa = [](const std::string& name) {
    return name == "avx512" || name == "avx2" || name == "generic";
  };
  const auto is_bf16_isa = [](const std::string& name) { return name == "amx" || name == "avx512bf16"; };
  const auto is_int16_isa = [](const std::string& name) { return name == "avx512vnni"; };
  const auto kind = [&](const std::string& name) {
    return is_fp32_isa(name) ? "a fp32" : is_bf16_isa(name) ? "a bf16" : "an int16";
  };
  MlpKernels k;
  if (precision == "int16" && !allow_int16) {
    throw std::invalid_argument("precision 'int16' is for the MLP value net only; use fp32, bf16 or auto here");
  }
  if (precision == "fp32") {
    if (is_bf16_isa(isa) || is_int16_isa(isa)) {
      throw std::invalid_argument("isa '" + isa + "' is " + kind(isa) + " kernel, but precision is 'fp32'");
    }
    k.fp32 = &gemm_kernel(isa);
  } else if (precision == "bf16" || precision == "int16") {
    const bool bf16 = precision == "bf16";
    if (is_fp32_isa(isa) || (bf16 ? is_int16_isa(isa) : is_bf16_isa(isa))) {
      throw std::invalid_argument("isa '" + isa + "' is " + kind(isa) + " kernel, but precision is '" + precision + "'");
    }
    if (bf16) k.bf16 = &bf16_kernel(isa);
    else k.int16 = &int16_kernel(isa);
    k.fp32 = &gemm_kernel("auto");
  } else if (precision == "auto") {
    if (is_fp32_isa(isa)) {
      k.fp32 = &gemm_kernel(isa);
      return k;
    }
    if (is_int16_isa(isa) && !allow_int16) {
      throw std::invalid_argument("isa '" + isa + "' is an int16 kernel, which the conv net does not have");
    }
    if (is_bf16_isa(isa) || (isa == "auto" && cpu_features().bf16_faster)) {
      k.bf16 = &bf16_kernel(isa);
    } else if (is_int16_isa(isa) || (isa == "auto" && allow_int16 && cpu_features().int16_faster)) {
      k.int16 = &int16_kernel(isa);
    } else if (isa != "auto") {
      throw std::invalid_argument("unknown isa '" + isa + "' (expected auto or a fp32, bf16 or int16 kernel)");
    }
    k.fp32 = &gemm_kernel("auto");
  } else {
    throw std::invalid_argument("unknown precision '" + precision + "' (expected fp32, bf16, int16 or auto)");
  }
  return k;
}

MlpWeights::MlpWeights(const MlpParams& params, const MlpKernels& kernels)
    : shape_(params.shape), kernels_(kernels), head_(make_head(params.head, *kernels.fp32)) {
  layers_.reserve(params.layers.size());
  for (const HiddenLayerParams& l : params.layers) {
    layers_.push_back(Hidden{make_hidden(l.linear, kernels, layers_.empty()), AlignedFloats(l.gamma.begin(), l.gamma.end()),
                             AlignedFloats(l.beta.begin(), l.beta.end())});
    max_width_ = std::max(max_width_, padded_out(layers_.back().linear));
    if (const auto* b = std::get_if<Bf16Linear>(&layers_.back().linear)) max_width_ = std::max(max_width_, b->padded_in());
    if (const auto* q = std::get_if<Int16Linear>(&layers_.back().linear)) max_width_ = std::max(max_width_, q->padded_in());
  }
  if (const auto* packed = std::get_if<PackedLinear>(&head_)) {
    max_width_ = std::max(max_width_, packed->padded_out());
  }
  if (kernels_.bf16 && !layers_.empty() && std::holds_alternative<SmallLinear>(head_)) {
    // The bf16 path fuses a small head into the last LayerNorm + GELU, which it runs doubled.
    fused_head_weight_.assign(params.head.weight.begin(), params.head.weight.end());
    for (float& w : fused_head_weight_) w *= 0.5f;
  }
}

void MlpWeights::head_forward(const float* x, long ldx, int rows, float* o) const {
  if (const auto* small = std::get_if<SmallLinear>(&head_)) {
    small->forward(x, ldx, rows, o, shape_.output_size);
  } else {
    const auto& packed = std::get<PackedLinear>(head_);
    float* y = thread_scratch().act[1].data();  // free: the hidden layers' output is in act[0]
    if (x == y) y = thread_scratch().act[0].data();
    packed.forward(x, ldx, rows, y, packed.padded_out());
    for (int r = 0; r < rows; ++r)
      std::copy_n(y + static_cast<long>(r) * packed.padded_out(), shape_.output_size, o + r * shape_.output_size);
  }
}

void MlpWeights::forward_block_fp32(const float* x, int rows, float* out) const {
  Scratch& s = thread_scratch();
  long ldx = shape_.input_size;
  int cur = 0;
  for (const Hidden& h : layers_) {
    const auto& linear = std::get<PackedLinear>(h.linear);
    float* y = s.act[cur].data();
    const long ldy = linear.padded_out();
    linear.forward(x, ldx, rows, y, ldy);
    layer_norm_gelu(y, ldy, rows, linear.out(), h.gamma.data(), h.beta.data(), shape_.layer_norm_eps);
    x = y;
    ldx = ldy;
    cur ^= 1;
  }
  head_forward(x, ldx, rows, out);
}

// The bf16 and int16 paths: the first layer in float32 (see make_hidden), the others through
// their narrow kernel, whose input the LayerNorm + GELU before it writes (bf16 directly;
// int16 from the float32 result, quantised per row). The head reads float32. The bf16 path's
// GELU is the cheaper bf16-grade fit (activations.h): its error is far under the bf16 rounding
// of the layers around it; the int16 path keeps the float32-grade one.
void MlpWeights::forward_block_narrow(const float* x, int rows, float* out) const {
  Scratch& s = thread_scratch();
  float* y = s.act[0].data();
  const long ldy = max_width_;
  if (layers_.empty()) return head_forward(x, shape_.input_size, rows, out);
  for (size_t i = 0; i < layers_.size(); ++i) {
    const Hidden& h = layers_[i];
    std::visit([&](const auto& linear) {
      using Layer = std::decay_t<decltype(linear)>;
      if constexpr (std::is_same_v<Layer, PackedLinear>) {
        linear.forward(x, shape_.input_size, rows, y, ldy);
      } else if constexpr (std::is_same_v<Layer, Bf16Linear>) {
        linear.forward(s.act16.data(), rows, y, ldy);
      } else {
        linear.forward(s.actq.data(), s.actq_scale.data(), rows, y, ldy);
      }
    }, h.linear);
    const int width = std::visit([](const auto& l) { return l.out(); }, h.linear);
    const auto* next = i + 1 < layers_.size() ? &layers_[i + 1].linear : nullptr;
    if (!next && !fused_head_weight_.empty()) {
      // The head's few dot products in the LayerNorm + GELU pass, on its halved weights.
      const auto& head = std::get<SmallLinear>(head_);
      return layer_norm_gelu_head_avx512(y, ldy, rows, width, h.gamma.data(), h.beta.data(), shape_.layer_norm_eps,
                                         GeluFit::kBf16Doubled, fused_head_weight_.data(), head.bias(), head.out(),
                                         out);
    }
    const Bf16Linear* next_bf16 = next ? std::get_if<Bf16Linear>(next) : nullptr;
    const GeluFit fit = next_bf16 ? GeluFit::kBf16Doubled : kernels_.bf16 ? GeluFit::kBf16 : GeluFit::kFloat32;
    layer_norm_gelu_avx512(y, ldy, rows, width, h.gamma.data(), h.beta.data(), shape_.layer_norm_eps,
                           next_bf16 ? s.act16.data() : nullptr, next_bf16 ? next_bf16->padded_in() : 0,
                           kBf16BlockRows, fit);
    if (const Int16Linear* next_int16 = next ? std::get_if<Int16Linear>(next) : nullptr) {
      quantize_rows_int16(y, ldy, rows, width, next_int16->qmax(), s.actq.data(), next_int16->padded_in(),
                          s.actq_scale.data(), kInt16BlockRows);
    }
  }
  head_forward(y, ldy, rows, out);
}

void MlpWeights::forward(const float* in, long batch, float* out) const {
  const int mr = kernels_.fp32->mr;
  const int block = kernels_.bf16 ? kBf16BlockRows : kernels_.int16 ? kInt16BlockRows
                                                                    : std::max(mr, kTargetRowBlock / mr * mr);
  Scratch& s = thread_scratch();
  static_assert(kInt16BlockRows <= kBf16BlockRows, "scratch rows");
  const size_t act_size = static_cast<size_t>(std::max(block, kBf16BlockRows)) * max_width_;
  ensure_size(s.act[0], act_size);
  ensure_size(s.act[1], act_size);
  if (kernels_.bf16) ensure_size(s.act16, act_size);
  if (kernels_.int16) {
    ensure_size(s.actq, act_size);
    ensure_size(s.actq_scale, static_cast<size_t>(kInt16BlockRows));
  }

  const FlushDenormalsScope no_denormals;
  std::optional<Bf16Scope> scope;
  if (kernels_.bf16 && !layers_.empty() && batch > 0) scope.emplace(*kernels_.bf16);
  for (long r0 = 0; r0 < batch; r0 += block) {
    const int rows = static_cast<int>(std::min<long>(block, batch - r0));
    const float* x = in + r0 * shape_.input_size;
    float* o = out + r0 * shape_.output_size;
    if (kernels_.bf16 || kernels_.int16) {
      forward_block_narrow(x, rows, o);
    } else {
      forward_block_fp32(x, rows, o);
    }
    if (shape_.stake_column >= 0) scale_by_stake(x, rows, o);
  }
}

void MlpWeights::scale_by_stake(const float* x, int rows, float* out) const {
  const int n_in = shape_.input_size, n_out = shape_.output_size;
  for (int r = 0; r < rows; ++r) {
    const float stake = x[static_cast<long>(r) * n_in + shape_.stake_column] * shape_.stake_scale;
    float* o = out + static_cast<long>(r) * n_out;
    for (int j = 0; j < n_out; ++j) o[j] *= stake;
  }
}

MlpWeightsPtr load_mlp_weights(const uint8_t* data, size_t size, const MlpKernels& kernels) {
  return std::make_shared<const MlpWeights>(parse_mlp_weights(data, size), kernels);
}

MlpWeightsPtr load_mlp_weights_file(const std::string& path, const MlpKernels& kernels) {
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  try {
    return load_mlp_weights(bytes.data(), bytes.size(), kernels);
  } catch (const WeightsFormatError& e) {
    throw WeightsFormatError(std::string(e.what()) + " [file '" + path + "']");
  }
}

MlpValueNet::MlpValueNet(const Game& game, MlpWeightsPtr weights)
    : game_(game.description()), input_size_(query_size(game)), output_size_(game.num_hands()) {
  set_weights(std::move(weights));
}

void MlpValueNet::check_fits(const MlpWeights& weights) const {
  const MlpShape& s = weights.shape();
  if (s.input_size != input_size_ || s.output_size != output_size_) {
    throw std::invalid_argument("MLP weights have input size " + std::to_string(s.input_size) + " and output size " +
                                std::to_string(s.output_size) + ", but " + game_ + " needs input size (query size) " +
                                std::to_string(input_size_) + " and output size (num_hands) " +
                                std::to_string(output_size_));
  }
}

void MlpValueNet::set_weights(MlpWeightsPtr weights) {
  if (!weights) throw std::invalid_argument("MlpValueNet: weights must not be null");
  check_fits(*weights);
  weights_.store(std::move(weights));
  version_.fetch_add(1);
}

void MlpValueNet::forward(const float* in, long batch, float* out) const {
  const MlpWeightsPtr w = weights();  // one snapshot for the whole batch
  w->forward(in, batch, out);
}

void MlpValueNet::compute_values(const LeafQueryBatch& batch, double* out) {
  if (batch.size <= 0) return;
  if (batch.row_size != input_size_) {
    throw std::invalid_argument("MlpValueNet: query rows have " + std::to_string(batch.row_size) +
                                " floats, the net expects " + std::to_string(input_size_));
  }
  std::vector<float>& values = thread_scratch().values;
  values.resize(static_cast<size_t>(batch.size) * output_size_);
  forward(batch.rows, batch.size, values.data());
  std::copy(values.begin(), values.end(), out);
}

}  // namespace rebel

#include "nets/mlp.h"

#include <algorithm>
#include <stdexcept>

#include "nets/activations.h"

namespace rebel {

namespace {

// Rows evaluated through the whole network before moving on: the activations of a block
// stay in L1 between layers while the weights stream from L2 (8 to 32 measured alike).
constexpr int kTargetRowBlock = 16;
// Heads with at most this many outputs use dot products rather than padded panels.
constexpr int kSmallHeadMaxOutputs = 16;

struct Scratch {
  AlignedFloats act[2];
  std::vector<float> values;  // float outputs before widening to double
};

Scratch& thread_scratch() {
  thread_local Scratch scratch;
  return scratch;
}

void ensure_size(AlignedFloats& v, size_t n) {
  if (v.size() < n) v.resize(n);
}

std::variant<SmallLinear, PackedLinear> make_head(const DenseParams& d, const GemmKernel& kernel) {
  if (d.out <= kSmallHeadMaxOutputs) return SmallLinear(d.weight.data(), d.bias.data(), d.out, d.in);
  return PackedLinear(kernel, d.weight.data(), d.bias.data(), d.out, d.in);
}

}  // namespace

MlpWeights::MlpWeights(const MlpParams& params, const GemmKernel& kernel)
    : shape_(params.shape), kernel_(&kernel), head_(make_head(params.head, kernel)) {
  layers_.reserve(params.layers.size());
  for (const HiddenLayerParams& l : params.layers) {
    layers_.push_back(Hidden{PackedLinear(kernel, l.linear.weight.data(), l.linear.bias.data(), l.linear.out, l.linear.in),
                             AlignedFloats(l.gamma.begin(), l.gamma.end()), AlignedFloats(l.beta.begin(), l.beta.end())});
    max_width_ = std::max(max_width_, layers_.back().linear.padded_out());
  }
  if (const auto* packed = std::get_if<PackedLinear>(&head_)) {
    max_width_ = std::max(max_width_, packed->padded_out());
  }
}

void MlpWeights::forward(const float* in, long batch, float* out) const {
  const int mr = kernel_->mr;
  const int block = std::max(mr, kTargetRowBlock / mr * mr);
  Scratch& s = thread_scratch();
  ensure_size(s.act[0], static_cast<size_t>(block) * max_width_);
  ensure_size(s.act[1], static_cast<size_t>(block) * max_width_);

  for (long r0 = 0; r0 < batch; r0 += block) {
    const int rows = static_cast<int>(std::min<long>(block, batch - r0));
    const float* x = in + r0 * shape_.input_size;
    long ldx = shape_.input_size;
    int cur = 0;
    for (const Hidden& h : layers_) {
      float* y = s.act[cur].data();
      const long ldy = h.linear.padded_out();
      h.linear.forward(x, ldx, rows, y, ldy);
      layer_norm_gelu(y, ldy, rows, h.linear.out(), h.gamma.data(), h.beta.data(), shape_.layer_norm_eps);
      x = y;
      ldx = ldy;
      cur ^= 1;
    }
    float* o = out + r0 * shape_.output_size;
    if (const auto* small = std::get_if<SmallLinear>(&head_)) {
      small->forward(x, ldx, rows, o, shape_.output_size);
    } else {
      const auto& packed = std::get<PackedLinear>(head_);
      float* y = s.act[cur].data();
      packed.forward(x, ldx, rows, y, packed.padded_out());
      for (int r = 0; r < rows; ++r)
        std::copy_n(y + static_cast<long>(r) * packed.padded_out(), shape_.output_size, o + r * shape_.output_size);
    }
  }
}

MlpWeightsPtr load_mlp_weights(const uint8_t* data, size_t size, const GemmKernel& kernel) {
  return std::make_shared<const MlpWeights>(parse_mlp_weights(data, size), kernel);
}

MlpWeightsPtr load_mlp_weights_file(const std::string& path, const GemmKernel& kernel) {
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  try {
    return load_mlp_weights(bytes.data(), bytes.size(), kernel);
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
  std::atomic_store(&weights_, std::move(weights));
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

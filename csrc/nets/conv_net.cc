#include "nets/conv_net.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <thread>

#include "nets/activations.h"
#include "util/denormals.h"

namespace rebel {

namespace {

// Cells (im2col rows) evaluated through the whole net together: their activations and im2col
// rows stay in L2 while each layer's weights are reused across all of them.
constexpr int kChunkRows = 256;
constexpr int kMaxSide = 19;

void check_dense(const DenseParams& d, const std::string& name, int in, int out) {
  if ((in >= 0 && d.in != in) || (out >= 0 && d.out != out) || d.in < 1 || d.out < 1) {
    throw std::invalid_argument("conv net layer '" + name + "' is " + std::to_string(d.out) + " x " +
                                std::to_string(d.in) + ", expected " + (out >= 0 ? std::to_string(out) : "any") +
                                " x " + (in >= 0 ? std::to_string(in) : "any"));
  }
  if (d.weight.size() != static_cast<size_t>(d.in) * d.out || d.bias.size() != static_cast<size_t>(d.out)) {
    throw std::invalid_argument("conv net layer '" + name + "' has " + std::to_string(d.weight.size()) + " weights and " +
                                std::to_string(d.bias.size()) + " biases for a " + std::to_string(d.out) + " x " +
                                std::to_string(d.in) + " layer");
  }
  const auto finite = [](float v) { return std::isfinite(v); };
  if (!std::all_of(d.weight.begin(), d.weight.end(), finite) || !std::all_of(d.bias.begin(), d.bias.end(), finite)) {
    throw std::invalid_argument("conv net layer '" + name + "' has non-finite weights");
  }
}

const ConvNetParams& checked(const ConvNetParams& p) {
  p.validate();
  return p;
}

void relu(float* y, long ld, int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    float* row = y + r * ld;
    for (int c = 0; c < cols; ++c) row[c] = std::max(row[c], 0.0f);
  }
}

template <class V>
void ensure_size(V& v, size_t size) {
  if (v.size() < size) v.resize(size);
}

}  // namespace

void ConvNetParams::validate() const {
  if (m < 1 || m > kMaxSide || n < 1 || n > kMaxSide) {
    throw std::invalid_argument("conv net board " + std::to_string(m) + " x " + std::to_string(n) + ": sides must be in 1.." +
                                std::to_string(kMaxSide));
  }
  if (planes < 1) throw std::invalid_argument("conv net: planes must be >= 1, got " + std::to_string(planes));
  check_dense(stem, "stem", 9 * planes, -1);
  const int c = stem.out;
  if (convs.size() % 2 != 0) {
    throw std::invalid_argument("conv net: " + std::to_string(convs.size()) +
                                " residual convolutions given, expected two per block");
  }
  for (size_t i = 0; i < convs.size(); ++i) check_dense(convs[i], "convs[" + std::to_string(i) + "]", 9 * c, c);
  check_dense(policy_conv, "policy_conv", c, -1);
  check_dense(policy_fc, "policy_fc", cells() * policy_conv.out, cells());
  check_dense(value_conv, "value_conv", c, -1);
  check_dense(value_fc1, "value_fc1", cells() * value_conv.out, -1);
  check_dense(value_fc2, "value_fc2", value_fc1.out, 1);
}

struct ConvPolicyValueNet::Scratch {
  AlignedFloats x, t, y;  // activations, rows rounded up to a whole bf16 block
  AlignedFloats col;      // float32 im2col rows
  AlignedBf16 act16;      // a convolution's input rounded to bf16
  AlignedBf16 a16;        // one block of bf16 im2col rows
  AlignedFloats pc, vc, logits, hidden, value;
};

ConvPolicyValueNet::ConvPolicyValueNet(const ConvNetParams& params, const MlpKernels& kernels)
    : m_(checked(params).m),
      n_(params.n),
      planes_(params.planes),
      channels_(params.channels()),
      kernels_(kernels),
      stem_(*kernels.fp32, params.stem.weight.data(), params.stem.bias.data(), params.stem.out, params.stem.in),
      policy_conv_(params.policy_conv.weight.data(), params.policy_conv.bias.data(), params.policy_conv.out,
                   params.policy_conv.in),
      value_conv_(params.value_conv.weight.data(), params.value_conv.bias.data(), params.value_conv.out,
                  params.value_conv.in),
      value_fc2_(params.value_fc2.weight.data(), params.value_fc2.bias.data(), 1, params.value_fc2.in),
      policy_fc_(*kernels.fp32, params.policy_fc.weight.data(), params.policy_fc.bias.data(), params.policy_fc.out,
                 params.policy_fc.in),
      value_fc1_(*kernels.fp32, params.value_fc1.weight.data(), params.value_fc1.bias.data(), params.value_fc1.out,
                 params.value_fc1.in),
      policy_planes_(params.policy_conv.out),
      value_planes_(params.value_conv.out) {
  ld_ = stem_.padded_out();
  convs_.reserve(params.convs.size());
  for (const DenseParams& d : params.convs) {
    if (kernels.bf16) {
      convs_.emplace_back(std::in_place_type<Bf16Linear>, *kernels.bf16, d.weight.data(), d.bias.data(), d.out, d.in);
    } else {
      convs_.emplace_back(std::in_place_type<PackedLinear>, *kernels.fp32, d.weight.data(), d.bias.data(), d.out, d.in);
    }
    ld_ = std::max(ld_, std::visit([](const auto& l) { return l.padded_out(); }, convs_.back()));
  }
  chunk_positions_ = std::max(1, kChunkRows / params.cells());
}

void ConvPolicyValueNet::conv3x3(const Conv& conv, const float* act, int positions, float* out, Scratch& s) const {
  const int cells = m_ * n_, rows = positions * cells, c = channels_;
  const int k = 9 * c;
  // The source row of each of a cell's 9 neighbours, or -1 off the board.
  const auto neighbour = [&](int row, int tap) {
    const int cell = row % cells, i = cell / n_ + tap / 3 - 1, j = cell % n_ + tap % 3 - 1;
    return (i < 0 || i >= m_ || j < 0 || j >= n_) ? -1 : row - cell + i * n_ + j;
  };
  if (const auto* fp32 = std::get_if<PackedLinear>(&conv)) {
    ensure_size(s.col, static_cast<size_t>(rows) * k);
    for (int r = 0; r < rows; ++r) {
      float* dst = s.col.data() + static_cast<size_t>(r) * k;
      for (int tap = 0; tap < 9; ++tap, dst += c) {
        const int src = neighbour(r, tap);
        if (src < 0) {
          std::fill_n(dst, c, 0.0f);
        } else {
          std::copy_n(act + static_cast<size_t>(src) * ld_, c, dst);
        }
      }
    }
    fp32->forward(s.col.data(), k, rows, out, ld_);
    return;
  }
  const auto& bf16 = std::get<Bf16Linear>(conv);
  const int k_pad = bf16.padded_in();
  ensure_size(s.act16, static_cast<size_t>(rows) * c);
  ensure_size(s.a16, static_cast<size_t>(kBf16BlockRows) * k_pad);
  rows_to_bf16_avx512(act, ld_, rows, c, s.act16.data(), c, rows);
  for (int r0 = 0; r0 < rows; r0 += kBf16BlockRows) {
    const int block = std::min(kBf16BlockRows, rows - r0);
    for (int rr = 0; rr < kBf16BlockRows; ++rr) {
      uint16_t* dst = s.a16.data() + static_cast<size_t>(rr) * k_pad;
      if (rr >= block) {
        std::fill_n(dst, k_pad, uint16_t{0});
        continue;
      }
      for (int tap = 0; tap < 9; ++tap) {
        const int src = neighbour(r0 + rr, tap);
        if (src < 0) {
          std::fill_n(dst + tap * c, c, uint16_t{0});
        } else {
          std::memcpy(dst + tap * c, s.act16.data() + static_cast<size_t>(src) * c, sizeof(uint16_t) * c);
        }
      }
      std::fill(dst + k, dst + k_pad, uint16_t{0});
    }
    bf16.forward(s.a16.data(), block, out + static_cast<size_t>(r0) * ld_, ld_);
  }
}

void ConvPolicyValueNet::forward_chunk(const float* planes, int positions, float* priors, float* values,
                                       Scratch& s) const {
  const int cells = m_ * n_, rows = positions * cells, c = channels_;
  const size_t act_size = static_cast<size_t>(rows + kBf16BlockRows) * ld_;
  ensure_size(s.x, act_size);
  ensure_size(s.t, act_size);
  ensure_size(s.y, act_size);

  // Stem: im2col straight from the (position, plane, row, column) input.
  const int ks = 9 * planes_;
  ensure_size(s.col, static_cast<size_t>(rows) * std::max(ks, 9 * c));
  for (int r = 0; r < rows; ++r) {
    const int p = r / cells, cell = r % cells, i0 = cell / n_, j0 = cell % n_;
    float* dst = s.col.data() + static_cast<size_t>(r) * ks;
    for (int tap = 0; tap < 9; ++tap) {
      const int i = i0 + tap / 3 - 1, j = j0 + tap % 3 - 1;
      const bool inside = i >= 0 && i < m_ && j >= 0 && j < n_;
      for (int q = 0; q < planes_; ++q) {
        dst[tap * planes_ + q] = inside ? planes[(static_cast<size_t>(p) * planes_ + q) * cells + i * n_ + j] : 0.0f;
      }
    }
  }
  stem_.forward(s.col.data(), ks, rows, s.x.data(), ld_);
  relu(s.x.data(), ld_, rows, c);

  // Residual blocks: x = relu(x + conv2(relu(conv1(x)))).
  for (size_t b = 0; b + 1 < convs_.size(); b += 2) {
    conv3x3(convs_[b], s.x.data(), positions, s.t.data(), s);
    relu(s.t.data(), ld_, rows, c);
    conv3x3(convs_[b + 1], s.t.data(), positions, s.y.data(), s);
    for (int r = 0; r < rows; ++r) {
      float* xr = s.x.data() + static_cast<size_t>(r) * ld_;
      const float* yr = s.y.data() + static_cast<size_t>(r) * ld_;
      for (int ch = 0; ch < c; ++ch) xr[ch] = std::max(xr[ch] + yr[ch], 0.0f);
    }
  }

  // Policy head: 1x1 convolution, relu, a Linear layer over the cells, softmax.
  ensure_size(s.pc, static_cast<size_t>(rows) * policy_planes_);
  policy_conv_.forward(s.x.data(), ld_, rows, s.pc.data(), policy_planes_);
  relu(s.pc.data(), policy_planes_, rows, policy_planes_);
  const int lp = policy_fc_.padded_out();
  ensure_size(s.logits, static_cast<size_t>(positions) * lp);
  policy_fc_.forward(s.pc.data(), static_cast<long>(cells) * policy_planes_, positions, s.logits.data(), lp);
  for (int p = 0; p < positions; ++p) {
    const float* logit = s.logits.data() + static_cast<size_t>(p) * lp;
    float* prior = priors + static_cast<size_t>(p) * cells;
    const float top = *std::max_element(logit, logit + cells);
    double sum = 0.0;
    for (int i = 0; i < cells; ++i) sum += prior[i] = std::exp(logit[i] - top);
    const float scale = static_cast<float>(1.0 / sum);
    for (int i = 0; i < cells; ++i) prior[i] *= scale;
  }

  // Value head: 1x1 convolution, relu, Linear, relu, Linear, tanh.
  ensure_size(s.vc, static_cast<size_t>(rows) * value_planes_);
  value_conv_.forward(s.x.data(), ld_, rows, s.vc.data(), value_planes_);
  relu(s.vc.data(), value_planes_, rows, value_planes_);
  const int lh = value_fc1_.padded_out();
  ensure_size(s.hidden, static_cast<size_t>(positions) * lh);
  value_fc1_.forward(s.vc.data(), static_cast<long>(cells) * value_planes_, positions, s.hidden.data(), lh);
  relu(s.hidden.data(), lh, positions, value_fc1_.out());
  ensure_size(s.value, static_cast<size_t>(positions));
  value_fc2_.forward(s.hidden.data(), lh, positions, s.value.data(), 1);
  for (int p = 0; p < positions; ++p) values[p] = std::tanh(s.value[p]);
}

void ConvPolicyValueNet::forward_range(const float* planes, long begin, long end, float* priors, float* values) const {
  thread_local Scratch scratch;
  const FlushDenormalsScope no_denormals;
  std::optional<Bf16Scope> scope;
  if (kernels_.bf16 && !convs_.empty() && end > begin) scope.emplace(*kernels_.bf16);
  const int cells = m_ * n_;
  const size_t in_size = static_cast<size_t>(planes_) * cells;
  for (long p0 = begin; p0 < end; p0 += chunk_positions_) {
    const int count = static_cast<int>(std::min<long>(chunk_positions_, end - p0));
    forward_chunk(planes + p0 * in_size, count, priors + p0 * cells, values + p0, scratch);
  }
}

void ConvPolicyValueNet::forward(const float* planes, long batch, float* priors, float* values, int threads) const {
  if (threads < 1) throw std::invalid_argument("conv net forward: threads must be >= 1, got " + std::to_string(threads));
  // Fewer threads than chunks would leave some idle; a thread gets at least one chunk.
  const long chunks = (batch + chunk_positions_ - 1) / chunk_positions_;
  const int used = static_cast<int>(std::min<long>(threads, chunks));
  if (used <= 1) return forward_range(planes, 0, batch, priors, values);
  std::vector<std::thread> workers;
  workers.reserve(used - 1);
  const auto bound = [&](int t) { return std::min(batch, (chunks * t / used) * chunk_positions_); };
  for (int t = 1; t < used; ++t) {
    workers.emplace_back([=] { forward_range(planes, bound(t), bound(t + 1), priors, values); });
  }
  forward_range(planes, 0, bound(1), priors, values);
  for (std::thread& w : workers) w.join();
}

}  // namespace rebel

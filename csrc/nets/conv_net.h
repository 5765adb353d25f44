// The AlphaZero policy-value net (rebel.alphazero.net.PolicyValueNet) evaluated natively, so
// MCTS needs neither torch nor the GIL for its leaves. The Python side folds each BatchNorm
// into the convolution before it and hands over plain Linear layers:
//   - a 3x3 convolution (padding 1) is a Linear layer on im2col rows: one row per board cell,
//     holding the 3 x 3 neighbourhood of every input channel in (row offset, column offset,
//     channel) order, zeros off the board; weight [out][9 * in];
//   - a 1x1 convolution is a Linear layer on the cells' channel vectors;
//   - the fully connected heads read a position's cells cell-major (cell * planes + plane).
// Activations are kept as (position, cell) rows of channels. Precision as for the MLP
// (mlp_kernels): "fp32", or "bf16" for the residual blocks' convolutions (products of
// bf16-rounded activations and weights, float32 sums); the stem, the heads, the residual
// additions, softmax and tanh stay in float32.
#pragma once

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "nets/gemm.h"
#include "nets/gemm_bf16.h"
#include "nets/mlp.h"
#include "nets/mlp_weights.h"

namespace rebel {

struct ConvNetParams {
  int m = 0, n = 0;                 // board rows and columns
  int planes = 0;                   // input planes per cell
  DenseParams stem;                 // 3x3: [channels][9 * planes]
  std::vector<DenseParams> convs;   // two 3x3 convolutions per residual block: [channels][9 * channels]
  DenseParams policy_conv;          // 1x1: [policy planes][channels]
  DenseParams policy_fc;            // [m * n][m * n * policy planes]
  DenseParams value_conv;           // 1x1: [value planes][channels]
  DenseParams value_fc1;            // [hidden][m * n * value planes]
  DenseParams value_fc2;            // [1][hidden]

  int cells() const { return m * n; }
  int channels() const { return stem.out; }
  // std::invalid_argument naming the first inconsistency (sizes, counts, non-finite values).
  void validate() const;
};

class ConvPolicyValueNet {
 public:
  ConvPolicyValueNet(const ConvNetParams& params, const MlpKernels& kernels);

  int m() const { return m_; }
  int n() const { return n_; }
  int planes() const { return planes_; }
  int channels() const { return channels_; }
  int blocks() const { return static_cast<int>(convs_.size() / 2); }
  const MlpKernels& kernels() const { return kernels_; }

  // From planes[b][planes][m][n] (float32), writes priors[b][m * n] (the softmax of the
  // policy logits over all cells) and values[b] (tanh, for the player to move) for b < batch.
  // Splits the batch over `threads` threads (>= 1). Thread-safe.
  void forward(const float* planes, long batch, float* priors, float* values, int threads = 1) const;

 private:
  using Conv = std::variant<PackedLinear, Bf16Linear>;
  struct Scratch;

  void forward_range(const float* planes, long begin, long end, float* priors, float* values) const;
  void forward_chunk(const float* planes, int positions, float* priors, float* values, Scratch& s) const;
  // 3x3 convolution of act (rows of `channels_` floats, stride ld_) into out (stride ld_).
  void conv3x3(const Conv& conv, const float* act, int positions, float* out, Scratch& s) const;

  int m_, n_, planes_, channels_;
  MlpKernels kernels_;
  PackedLinear stem_;
  std::vector<Conv> convs_;
  SmallLinear policy_conv_, value_conv_, value_fc2_;
  PackedLinear policy_fc_, value_fc1_;
  int policy_planes_, value_planes_;
  int ld_;               // row stride of the activations (channels rounded up to whole panels)
  int chunk_positions_;  // positions evaluated together (about kChunkRows cells)
};

}  // namespace rebel

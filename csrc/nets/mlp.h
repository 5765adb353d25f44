// The MLP value net: (Linear -> LayerNorm -> GELU) x num_layers, then a Linear head, on the
// CPU, bit-compatible in layout with rebel.model.ValueMLP. Precision "fp32" runs everything
// in float32; "bf16" runs the products of the hidden-to-hidden layers in bf16 with float32
// accumulation (gemm_bf16.h), "int16" in quantised int16 with exact int32 sums
// (gemm_int16.h); both keep the first layer (the query's beliefs), LayerNorm, GELU and the
// head in float32.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>

#include "core/game.h"
#include "nets/gemm.h"
#include "nets/gemm_bf16.h"
#include "nets/gemm_int16.h"
#include "nets/mlp_weights.h"
#include "core/value_net.h"
#include "util/atomic_snapshot.h"

namespace rebel {

// The kernels an MlpWeights runs on: float32 GEMM for the head (and the hidden layers when
// bf16 and int16 are null), bf16 or int16 for the hidden-to-hidden layers otherwise (at
// most one of them is set).
struct MlpKernels {
  const GemmKernel* fp32 = nullptr;
  const Bf16Kernel* bf16 = nullptr;
  const Int16Kernel* int16 = nullptr;

  const char* precision() const { return bf16 ? "bf16" : int16 ? "int16" : "fp32"; }
  // The hidden layers' kernel: e.g. "avx512" (fp32), "amx" (bf16) or "avx512vnni" (int16).
  const char* isa() const { return bf16 ? bf16->isa : int16 ? int16->isa : fp32->isa; }
};

// precision: "fp32", "bf16", "int16" or "auto" (bf16 where this CPU has a bf16 kernel faster
// than fp32: AMX, or AVX512_BF16 on AMD; else int16 where it has AVX512_VNNI; else fp32);
// isa: "auto" or a kernel of that precision (fp32: avx512, avx2, generic; bf16: amx,
// avx512bf16; int16: avx512vnni). allow_int16 false (the conv net, which has no int16 path):
// "int16" is refused and "auto" never picks it. Throws std::invalid_argument naming the
// problem: an unknown name, a precision this CPU cannot run, an isa of another precision.
MlpKernels mlp_kernels(const std::string& precision, const std::string& isa, bool allow_int16 = true);

// Immutable, packed weights for one set of kernels; shared by every thread that evaluates.
class MlpWeights {
 public:
  MlpWeights(const MlpParams& params, const MlpKernels& kernels);

  const MlpShape& shape() const { return shape_; }
  const MlpKernels& kernels() const { return kernels_; }

  // out[b][0..output_size) for b < batch, from in[b][0..input_size). Thread-safe: the
  // scratch space is per thread.
  void forward(const float* in, long batch, float* out) const;

 private:
  struct Hidden {
    std::variant<PackedLinear, Bf16Linear, Int16Linear> linear;
    AlignedFloats gamma, beta;
  };

  void forward_block_fp32(const float* x, int rows, float* out) const;
  void forward_block_narrow(const float* x, int rows, float* out) const;  // bf16 or int16
  void head_forward(const float* x, long ldx, int rows, float* out) const;
  // Multiplies each row's outputs by its stake (MlpShape::stake_column; version 2 weights).
  void scale_by_stake(const float* x, int rows, float* out) const;

  MlpShape shape_;
  MlpKernels kernels_;
  std::vector<Hidden> layers_;
  std::variant<SmallLinear, PackedLinear> head_;
  int max_width_ = 0;  // widest activation row stride (padded)
  AlignedFloats fused_head_weight_;  // bf16 path with a SmallLinear head: its weights halved
};

using MlpWeightsPtr = std::shared_ptr<const MlpWeights>;

// Decodes (see mlp_weights.h for the errors) and packs a weights file for `kernels`.
MlpWeightsPtr load_mlp_weights(const uint8_t* data, size_t size, const MlpKernels& kernels);
MlpWeightsPtr load_mlp_weights_file(const std::string& path, const MlpKernels& kernels);

// ValueNet backed by an MlpWeights snapshot. set_weights() swaps the snapshot atomically:
// a batch already running finishes with the weights it started with.
class MlpValueNet final : public ValueNet {
 public:
  // Throws std::invalid_argument if the weights do not fit the game's query layout.
  MlpValueNet(const Game& game, MlpWeightsPtr weights);

  void compute_values(const LeafQueryBatch& batch, double* out) override;
  std::string name() const override { return "mlp"; }

  // out[b][num_hands] from rows in[b][query_size] with one weights snapshot.
  void forward(const float* in, long batch, float* out) const;

  MlpWeightsPtr weights() const { return weights_.load(); }
  void set_weights(MlpWeightsPtr weights);
  // Counts set_weights calls (after the new weights are in place): a solve that reads the
  // same token before and after ran on one set of weights, if none were installed mid-solve.
  uint64_t values_token() const override { return version_.load(); }

  int input_size() const { return input_size_; }
  int output_size() const { return output_size_; }
  const std::string& game_description() const { return game_; }

 private:
  void check_fits(const MlpWeights& weights) const;

  std::string game_;
  int input_size_, output_size_;
  AtomicSnapshot<MlpWeights> weights_;
  std::atomic<uint64_t> version_{0};
};

}  // namespace rebel

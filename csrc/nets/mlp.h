// The MLP value net: (Linear -> LayerNorm -> GELU) x num_layers, then a Linear head, in
// float32 on the CPU, bit-compatible in layout with rebel.model.ValueMLP.
#pragma once

#include <memory>
#include <string>
#include <variant>

#include "core/game.h"
#include "core/value_net.h"
#include "nets/gemm.h"
#include "nets/mlp_weights.h"

namespace rebel {

// Immutable, packed weights for one GemmKernel; shared by every thread that evaluates.
class MlpWeights {
 public:
  MlpWeights(const MlpParams& params, const GemmKernel& kernel);

  const MlpShape& shape() const { return shape_; }
  const GemmKernel& kernel() const { return *kernel_; }

  // out[b][0..output_size) for b < batch, from in[b][0..input_size). Thread-safe: the
  // scratch space is per thread.
  void forward(const float* in, long batch, float* out) const;

 private:
  struct Hidden {
    PackedLinear linear;
    AlignedFloats gamma, beta;
  };

  MlpShape shape_;
  const GemmKernel* kernel_;
  std::vector<Hidden> layers_;
  std::variant<SmallLinear, PackedLinear> head_;
  int max_width_ = 0;  // widest activation row stride (padded)
};

using MlpWeightsPtr = std::shared_ptr<const MlpWeights>;

// Decodes (see mlp_weights.h for the errors) and packs a weights file for `kernel`.
MlpWeightsPtr load_mlp_weights(const uint8_t* data, size_t size, const GemmKernel& kernel);
MlpWeightsPtr load_mlp_weights_file(const std::string& path, const GemmKernel& kernel);

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

  MlpWeightsPtr weights() const { return std::atomic_load(&weights_); }
  void set_weights(MlpWeightsPtr weights);

  int input_size() const { return input_size_; }
  int output_size() const { return output_size_; }
  const std::string& game_description() const { return game_; }

 private:
  void check_fits(const MlpWeights& weights) const;

  std::string game_;
  int input_size_, output_size_;
  MlpWeightsPtr weights_;  // only accessed through std::atomic_load / std::atomic_store
};

}  // namespace rebel

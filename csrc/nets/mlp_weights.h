// Reading the MLP value-net weights file (format: docs/weights_format.md).
//
// Every problem with a file (bad magic, unsupported version, truncation, checksum
// mismatch, inconsistent or non-finite contents) is reported as WeightsFormatError, a
// std::invalid_argument (ValueError in Python); a file that cannot be read at all is a
// WeightsFileError carrying errno (OSError in Python).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace rebel {

inline constexpr char kMlpMagic[8] = {'R', 'E', 'B', 'E', 'L', 'M', 'L', 'P'};
// Version 1: a plain MLP (48-byte header). Version 2 (56-byte header) adds an output scaled
// per row by one input column, the stake. Version 3 (64-byte header) adds a metadata block
// after the payload: UTF-8 JSON naming the net's game and search (docs/weights_format.md).
inline constexpr uint32_t kMlpFormatVersion = 3;
inline constexpr size_t kMlpHeaderSize = 48;    // version 1
inline constexpr size_t kMlpHeaderSizeV2 = 56;  // version 2
inline constexpr size_t kMlpHeaderSizeV3 = 64;  // version 3
inline constexpr uint32_t kMlpFlagStakeOutput = 1;
inline constexpr uint32_t kMlpMaxMetadataBytes = 1u << 20;
inline constexpr size_t kMlpTrailerSize = 4;  // CRC-32 of everything before it

class WeightsFormatError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class WeightsFileError : public std::runtime_error {
 public:
  WeightsFileError(const std::string& path, int err);
  const std::string& path() const { return path_; }
  int error_code() const { return errno_; }

 private:
  std::string path_;
  int errno_;
};

struct MlpShape {
  int input_size = 0;
  int output_size = 0;
  int hidden_size = 0;
  int num_layers = 0;  // hidden (Linear -> LayerNorm -> GELU) blocks before the head
  float layer_norm_eps = 1e-5f;
  // Stake-relative output (version 2): every output of a row is multiplied by
  // in[stake_column] * stake_scale, so the head predicts values per unit of stake (in poker
  // the pot per player). -1: none (version 1).
  int stake_column = -1;
  float stake_scale = 1.0f;
};

// Parameters in torch layout: Linear weight [out][in] row-major.
struct DenseParams {
  int in = 0, out = 0;
  std::vector<float> weight, bias;
};

struct HiddenLayerParams {
  DenseParams linear;
  std::vector<float> gamma, beta;  // LayerNorm affine
};

struct MlpParams {
  MlpShape shape;
  std::string metadata;  // version 3: the JSON metadata block as stored (empty before version 3)
  std::vector<HiddenLayerParams> layers;
  DenseParams head;
};

// Standard CRC-32 (IEEE 802.3, reflected, as zlib.crc32).
uint32_t crc32(const uint8_t* data, size_t size, uint32_t crc = 0);

// Validates and decodes a whole weights file held in memory.
MlpParams parse_mlp_weights(const uint8_t* data, size_t size);

// The whole content of a file; throws WeightsFileError when it cannot be read.
std::vector<uint8_t> read_file_bytes(const std::string& path);

}  // namespace rebel

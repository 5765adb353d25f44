#include "nets/mlp_weights.h"

#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

namespace rebel {

namespace {

constexpr uint32_t kMaxDim = 1u << 24;
constexpr uint32_t kMaxLayers = 64;

std::array<uint32_t, 256> make_crc_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int b = 0; b < 8; ++b) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
  return table;
}

// Little-endian decoding byte by byte, so the format reads the same on any host.
uint32_t read_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}
uint64_t read_u64(const uint8_t* p) { return read_u32(p) | static_cast<uint64_t>(read_u32(p + 4)) << 32; }
float read_f32(const uint8_t* p) {
  const uint32_t bits = read_u32(p);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Sequential reader over the payload; every value must be finite.
class PayloadReader {
 public:
  PayloadReader(const uint8_t* p, uint64_t count) : p_(p), count_(count) {}

  std::vector<float> take(uint64_t n, const std::string& what) {
    std::vector<float> out(n);
    for (uint64_t i = 0; i < n; ++i, ++index_) {
      out[i] = read_f32(p_ + 4 * index_);
      if (!std::isfinite(out[i])) {
        throw WeightsFormatError("MLP weights: non-finite value in " + what + " (payload float " +
                                 std::to_string(index_) + ")");
      }
    }
    return out;
  }
  bool done() const { return index_ == count_; }

 private:
  const uint8_t* p_;
  uint64_t count_;
  uint64_t index_ = 0;
};

DenseParams take_dense(PayloadReader& reader, int in, int out, const std::string& what) {
  DenseParams d;
  d.in = in;
  d.out = out;
  d.weight = reader.take(static_cast<uint64_t>(in) * out, what + " weight");
  d.bias = reader.take(out, what + " bias");
  return d;
}

}  // namespace

WeightsFileError::WeightsFileError(const std::string& path, int err)
    : std::runtime_error("cannot read MLP weights file '" + path + "': " + std::strerror(err)), path_(path),
      errno_(err) {}

uint32_t crc32(const uint8_t* data, size_t size, uint32_t crc) {
  static const std::array<uint32_t, 256> table = make_crc_table();
  crc = ~crc;
  for (size_t i = 0; i < size; ++i) crc = table[(crc ^ data[i]) & 0xFFu] ^ (crc >> 8);
  return ~crc;
}

MlpParams parse_mlp_weights(const uint8_t* data, size_t size) {
  if (size < sizeof kMlpMagic || std::memcmp(data, kMlpMagic, sizeof kMlpMagic) != 0) {
    throw WeightsFormatError("not an MLP weights file: bad magic (expected 'REBELMLP' in the first 8 bytes, " +
                             std::to_string(size) + " bytes given)");
  }
  if (size < kMlpHeaderSize) {
    throw WeightsFormatError("MLP weights file truncated: " + std::to_string(size) + " bytes, the header alone is " +
                             std::to_string(kMlpHeaderSize));
  }
  const uint32_t version = read_u32(data + 8);
  if (version < 1 || version > kMlpFormatVersion) {
    throw WeightsFormatError("unsupported MLP weights format version " + std::to_string(version) +
                             " (this build reads versions 1 to " + std::to_string(kMlpFormatVersion) + ")");
  }
  const size_t header_size = version == 1 ? kMlpHeaderSize : version == 2 ? kMlpHeaderSizeV2 : kMlpHeaderSizeV3;
  if (read_u32(data + 12) != header_size) {
    throw WeightsFormatError("MLP weights: header size " + std::to_string(read_u32(data + 12)) + ", expected " +
                             std::to_string(header_size) + " for version " + std::to_string(version));
  }
  if (size < header_size) {
    throw WeightsFormatError("MLP weights file truncated: " + std::to_string(size) + " bytes, the header alone is " +
                             std::to_string(header_size));
  }
  const uint32_t input = read_u32(data + 16), output = read_u32(data + 20), hidden = read_u32(data + 24),
                 layers = read_u32(data + 28);
  const float eps = read_f32(data + 32);
  const uint32_t flags = read_u32(data + 36);
  const uint64_t count = read_u64(data + 40);
  // Version 1 has no stake, version 2 always one; version 3 says which in bit 0 of its flags.
  const bool flags_ok = version == 1 ? flags == 0u : version == 2 ? flags == kMlpFlagStakeOutput
                                                                  : (flags & ~kMlpFlagStakeOutput) == 0u;
  if (!flags_ok) {
    throw WeightsFormatError("MLP weights: unsupported flags " + std::to_string(flags) + " for version " +
                             std::to_string(version));
  }
  int stake_column = -1;
  float stake_scale = 1.0f;
  if (flags & kMlpFlagStakeOutput) {
    const uint32_t column = read_u32(data + 48);
    stake_scale = read_f32(data + 52);
    if (column >= input) {
      throw WeightsFormatError("MLP weights: stake column " + std::to_string(column) + " is not an input column (input " +
                               std::to_string(input) + ")");
    }
    if (!std::isfinite(stake_scale) || stake_scale <= 0.0f) {
      throw WeightsFormatError("MLP weights: stake scale must be finite and > 0, got " + std::to_string(stake_scale));
    }
    stake_column = static_cast<int>(column);
  }
  uint64_t metadata_size = 0;
  if (version == 3) {
    metadata_size = read_u32(data + 56);
    if (metadata_size > kMlpMaxMetadataBytes || read_u32(data + 60) != 0u) {
      throw WeightsFormatError("MLP weights: metadata of " + std::to_string(metadata_size) +
                               " bytes (at most " + std::to_string(kMlpMaxMetadataBytes) +
                               ") or a nonzero reserved field");
    }
  }
  if (input < 1 || input > kMaxDim || output < 1 || output > kMaxDim || hidden > kMaxDim || layers > kMaxLayers ||
      (layers > 0 && hidden < 1)) {
    throw WeightsFormatError("MLP weights: invalid dimensions (input " + std::to_string(input) + ", output " +
                             std::to_string(output) + ", hidden " + std::to_string(hidden) + ", layers " +
                             std::to_string(layers) + ")");
  }
  if (!std::isfinite(eps) || eps <= 0.0f) {
    throw WeightsFormatError("MLP weights: layer norm eps must be finite and > 0, got " + std::to_string(eps));
  }

  uint64_t expected = 0, fan_in = input;
  for (uint32_t l = 0; l < layers; ++l, fan_in = hidden) expected += fan_in * hidden + 3ull * hidden;
  expected += fan_in * output + output;
  if (count != expected) {
    throw WeightsFormatError("MLP weights: header says " + std::to_string(count) + " payload floats but its dimensions need " +
                             std::to_string(expected));
  }
  const uint64_t payload_end = header_size + 4 * expected;
  const uint64_t total = payload_end + metadata_size + kMlpTrailerSize;
  if (size < total) {
    throw WeightsFormatError("MLP weights file truncated: " + std::to_string(size) + " bytes, expected " +
                             std::to_string(total));
  }
  if (size > total) {
    throw WeightsFormatError("MLP weights file has " + std::to_string(size - total) +
                             " unexpected trailing bytes (expected " + std::to_string(total) + " bytes)");
  }
  const uint32_t stored_crc = read_u32(data + total - kMlpTrailerSize);
  const uint32_t actual_crc = crc32(data, total - kMlpTrailerSize);
  if (stored_crc != actual_crc) throw WeightsFormatError("MLP weights file corrupted: CRC-32 checksum mismatch");

  MlpParams params;
  params.shape = {static_cast<int>(input), static_cast<int>(output), static_cast<int>(hidden), static_cast<int>(layers),
                  eps, stake_column, stake_scale};
  params.metadata.assign(reinterpret_cast<const char*>(data + payload_end), metadata_size);
  PayloadReader reader(data + header_size, count);
  int in = static_cast<int>(input);
  for (uint32_t l = 0; l < layers; ++l) {
    const std::string name = "layer " + std::to_string(l);
    HiddenLayerParams layer;
    layer.linear = take_dense(reader, in, static_cast<int>(hidden), name + " linear");
    layer.gamma = reader.take(hidden, name + " layer norm weight");
    layer.beta = reader.take(hidden, name + " layer norm bias");
    params.layers.push_back(std::move(layer));
    in = static_cast<int>(hidden);
  }
  params.head = take_dense(reader, in, static_cast<int>(output), "head");
  return params;
}

std::vector<uint8_t> read_file_bytes(const std::string& path) {
  errno = 0;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) throw WeightsFileError(path, errno ? errno : EIO);
  std::vector<uint8_t> out;
  std::array<uint8_t, 1 << 16> chunk;
  for (;;) {
    const size_t n = std::fread(chunk.data(), 1, chunk.size(), file.get());
    out.insert(out.end(), chunk.begin(), chunk.begin() + static_cast<long>(n));
    if (n < chunk.size()) break;
  }
  if (std::ferror(file.get())) throw WeightsFileError(path, errno ? errno : EIO);
  return out;
}

}  // namespace rebel

#include "nets/gemm_bf16.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "util/cpu_features.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define REBEL_BF16_KERNELS 1
#include <immintrin.h>
#else
#define REBEL_BF16_KERNELS 0
#endif

namespace rebel {

uint16_t float_to_bf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // quiet NaN
  if ((u & 0x7f800000u) == 0) return static_cast<uint16_t>((u >> 16) & 0x8000u);          // denormal: +-0
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

float bf16_to_float(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

namespace {

#if REBEL_BF16_KERNELS

// ---------------------------------------------------------------------------------------
// AVX512_BF16: an M x 32 output tile in 2M zmm accumulators; per k pair, two weight vectors
// (32 columns x 2) and one broadcast of the row's bf16 pair per row.
constexpr int kDpMr = 8;

template <int M>
__attribute__((target("avx512f,avx512bf16"))) void tile_dp(int kpairs, const uint16_t* a, long lda,
                                                           const uint16_t* b, const float* bias, float* c,
                                                           long ldc) {
  __m512 c0[M], c1[M];
  const __m512 bias0 = _mm512_loadu_ps(bias), bias1 = _mm512_loadu_ps(bias + 16);
#pragma GCC unroll 8
  for (int r = 0; r < M; ++r) {
    c0[r] = bias0;
    c1[r] = bias1;
  }
  for (int p = 0; p < kpairs; ++p, b += 2 * kBf16PanelCols) {
    const __m512bh b0 = (__m512bh)_mm512_load_si512(b), b1 = (__m512bh)_mm512_load_si512(b + 32);
#pragma GCC unroll 8
    for (int r = 0; r < M; ++r) {
      int32_t pair;
      std::memcpy(&pair, a + r * lda + 2 * p, sizeof pair);
      const __m512bh av = (__m512bh)_mm512_set1_epi32(pair);
      c0[r] = _mm512_dpbf16_ps(c0[r], av, b0);
      c1[r] = _mm512_dpbf16_ps(c1[r], av, b1);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < M; ++r) {
    _mm512_storeu_ps(c + r * ldc, c0[r]);
    _mm512_storeu_ps(c + r * ldc + 16, c1[r]);
  }
}

using DpTile = void (*)(int, const uint16_t*, long, const uint16_t*, const float*, float*, long);
constexpr DpTile kDpTiles[kDpMr + 1] = {nullptr,    tile_dp<1>, tile_dp<2>, tile_dp<3>, tile_dp<4>,
                                        tile_dp<5>, tile_dp<6>, tile_dp<7>, tile_dp<8>};

void linear_dp(const uint16_t* a, long lda, int rows, int in, int k_pad, const uint16_t* packed, const float* bias,
               int panels, float* y, long ldy) {
  const int kpairs = (in + 1) / 2;  // the packed weights and `a` are zero past `in`
  for (int p = 0; p < panels; ++p) {
    const uint16_t* panel = packed + static_cast<size_t>(p) * k_pad * kBf16PanelCols;
    for (int r0 = 0; r0 < rows; r0 += kDpMr) {
      const int m = std::min(kDpMr, rows - r0);
      kDpTiles[m](kpairs, a + r0 * lda, lda, panel, bias + p * kBf16PanelCols, y + r0 * ldy + p * kBf16PanelCols, ldy);
    }
  }
}

void no_op() {}

// ---------------------------------------------------------------------------------------
// AMX-BF16. Tile registers: 0-3 accumulate a 16 x 64 output block (two panels), 4 holds 16
// activation rows x 32 k, 5-7 hold weight tiles (16 k pairs x 16 columns). Every tile is
// configured with 16 rows of 64 bytes; the caller's buffers always hold a whole block.
struct alignas(64) TileConfig {
  uint8_t palette_id;
  uint8_t start_row;
  uint8_t reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};

TileConfig make_tile_config() {
  TileConfig cfg{};
  cfg.palette_id = 1;
  for (int t = 0; t < 8; ++t) {
    cfg.colsb[t] = 64;
    cfg.rows[t] = kBf16BlockRows;
  }
  return cfg;
}

__attribute__((target("amx-tile"))) void amx_begin() {
  static const TileConfig cfg = make_tile_config();
  _tile_loadconfig(&cfg);
}

__attribute__((target("amx-tile"))) void amx_end() { _tile_release(); }

// Bytes between consecutive k pairs of a panel (32 columns x 2 bf16).
constexpr long kPanelRowBytes = 2 * kBf16PanelCols * sizeof(uint16_t);
// Elements of one 32-deep k block of a panel (16 pair rows).
constexpr long kPanelKBlock = kBf16KBlock / 2 * 2 * kBf16PanelCols;

__attribute__((target("amx-tile,amx-bf16"))) void linear_amx(const uint16_t* a, long lda, int /*rows*/, int /*in*/,
                                                             int k_pad, const uint16_t* packed, const float* bias,
                                                             int panels, float* y, long ldy) {
  const long a_stride = lda * static_cast<long>(sizeof(uint16_t));
  const long y_stride = ldy * static_cast<long>(sizeof(float));
  const int kblocks = k_pad / kBf16KBlock;
  const size_t panel_size = static_cast<size_t>(k_pad) * kBf16PanelCols;
  int p = 0;
  for (; p + 2 <= panels; p += 2) {
    const uint16_t* w0 = packed + p * panel_size;
    const uint16_t* w1 = w0 + panel_size;
    const float* b = bias + p * kBf16PanelCols;
    _tile_loadd(0, b, 0);  // stride 0: every row starts as the bias
    _tile_loadd(1, b + 16, 0);
    _tile_loadd(2, b + 32, 0);
    _tile_loadd(3, b + 48, 0);
    for (int kb = 0; kb < kblocks; ++kb) {
      _tile_loadd(4, a + kb * kBf16KBlock, a_stride);
      const uint16_t* b0 = w0 + kb * kPanelKBlock;
      const uint16_t* b1 = w1 + kb * kPanelKBlock;
      _tile_loadd(5, b0, kPanelRowBytes);
      _tile_loadd(6, b0 + 32, kPanelRowBytes);
      _tile_dpbf16ps(0, 4, 5);
      _tile_dpbf16ps(1, 4, 6);
      _tile_loadd(7, b1, kPanelRowBytes);
      _tile_loadd(5, b1 + 32, kPanelRowBytes);
      _tile_dpbf16ps(2, 4, 7);
      _tile_dpbf16ps(3, 4, 5);
    }
    float* yp = y + p * kBf16PanelCols;
    _tile_stored(0, yp, y_stride);
    _tile_stored(1, yp + 16, y_stride);
    _tile_stored(2, yp + 32, y_stride);
    _tile_stored(3, yp + 48, y_stride);
  }
  if (p < panels) {
    const uint16_t* w0 = packed + p * panel_size;
    const float* b = bias + p * kBf16PanelCols;
    _tile_loadd(0, b, 0);
    _tile_loadd(1, b + 16, 0);
    for (int kb = 0; kb < kblocks; ++kb) {
      _tile_loadd(4, a + kb * kBf16KBlock, a_stride);
      const uint16_t* b0 = w0 + kb * kPanelKBlock;
      _tile_loadd(5, b0, kPanelRowBytes);
      _tile_loadd(6, b0 + 32, kPanelRowBytes);
      _tile_dpbf16ps(0, 4, 5);
      _tile_dpbf16ps(1, 4, 6);
    }
    float* yp = y + p * kBf16PanelCols;
    _tile_stored(0, yp, y_stride);
    _tile_stored(1, yp + 16, y_stride);
  }
}

const Bf16Kernel kAmxKernel{"amx", linear_amx, amx_begin, amx_end};
const Bf16Kernel kDpKernel{"avx512bf16", linear_dp, no_op, no_op};

#endif  // REBEL_BF16_KERNELS

std::vector<const Bf16Kernel*> supported_kernels() {
  std::vector<const Bf16Kernel*> out;
#if REBEL_BF16_KERNELS
  if (cpu_features().amx_bf16) out.push_back(&kAmxKernel);
  if (cpu_features().avx512bf16) out.push_back(&kDpKernel);
#endif
  return out;
}

}  // namespace

const Bf16Kernel& bf16_kernel(const std::string& isa) {
  const auto kernels = supported_kernels();
  if (isa == "auto") {
    if (kernels.empty()) {
      throw std::invalid_argument(
          "precision 'bf16' needs a CPU with AMX-BF16 or AVX512_BF16, and this one has neither; use precision "
          "'fp32' (or 'auto', which falls back to fp32)");
    }
    return *kernels.front();
  }
  for (const Bf16Kernel* k : kernels)
    if (isa == k->isa) return *k;
  if (isa == "amx" || isa == "avx512bf16") throw std::invalid_argument("this CPU does not support isa '" + isa + "'");
  throw std::invalid_argument("unknown bf16 isa '" + isa + "' (expected auto, amx or avx512bf16)");
}

std::vector<std::string> supported_bf16_isas() {
  std::vector<std::string> out;
  for (const Bf16Kernel* k : supported_kernels()) out.emplace_back(k->isa);
  return out;
}

Bf16Linear::Bf16Linear(const Bf16Kernel& kernel, const float* weight, const float* bias, int out, int in,
                       float weight_scale)
    : kernel_(&kernel),
      in_(in),
      out_(out),
      k_pad_(std::max(kBf16KBlock, (in + kBf16KBlock - 1) / kBf16KBlock * kBf16KBlock)),
      panels_((out + kBf16PanelCols - 1) / kBf16PanelCols) {
  int exponent = 0;
  if (!(weight_scale > 0.0f) || !std::isfinite(weight_scale) || std::frexp(weight_scale, &exponent) != 0.5f)
    throw std::invalid_argument("Bf16Linear: weight_scale must be a power of two, not " + std::to_string(weight_scale));
  weight_.assign(static_cast<size_t>(panels_) * k_pad_ * kBf16PanelCols, uint16_t{0});
  bias_.assign(static_cast<size_t>(panels_) * kBf16PanelCols, 0.0f);
  for (int o = 0; o < out; ++o) {
    const int p = o / kBf16PanelCols, j = o % kBf16PanelCols;
    uint16_t* panel = weight_.data() + static_cast<size_t>(p) * k_pad_ * kBf16PanelCols;
    for (int k = 0; k < in; ++k) {
      const float w = weight[static_cast<size_t>(o) * in + k];
      uint16_t b = float_to_bf16(w);
      if (weight_scale != 1.0f) b = float_to_bf16(bf16_to_float(b) * weight_scale);
      if (!std::isfinite(bf16_to_float(b))) {
        throw std::invalid_argument("MLP weight " + std::to_string(w) + " (output " + std::to_string(o) + ", input " +
                                    std::to_string(k) + ") is too large for bf16; use precision 'fp32'");
      }
      panel[(static_cast<size_t>(k / 2) * kBf16PanelCols + j) * 2 + k % 2] = b;
    }
    bias_[o] = bias[o];
  }
}

void Bf16Linear::forward(const uint16_t* a, int rows, float* y, long ldy) const {
  kernel_->linear(a, k_pad_, rows, in_, k_pad_, weight_.data(), bias_.data(), panels_, y, ldy);
}

}  // namespace rebel

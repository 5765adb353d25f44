#include "nets/gemm.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "util/cpu_features.h"
#include "util/simd.h"

#if defined(__x86_64__) || defined(__i386__)
#define REBEL_X86 1
#include <immintrin.h>
#else
#define REBEL_X86 0
#endif

namespace rebel {

namespace {

// ---------------------------------------------------------------------------------------
// Micro-kernels. Each keeps an M x NR output tile in registers across the whole reduction:
// per k it loads one packed weight row (NR floats), broadcasts M activations and issues
// M * NR / lanes fused multiply-adds.

// Portable fallback written with GCC vector extensions (SSE2 on x86-64, NEON on ARM):
// a 4 x 8 tile is 8 accumulators of 4 lanes, which fits 16 vector registers.
constexpr int kGenericMr = 4, kGenericNr = 8;
using simd::v4f;

template <int M>
void tile_generic(int k, const float* a, long lda, const float* b, const float* bias, float* c, long ldc) {
  v4f acc[M][2];
  v4f b0, b1;
  std::memcpy(&b0, bias, sizeof b0);
  std::memcpy(&b1, bias + 4, sizeof b1);
  for (int r = 0; r < M; ++r) {
    acc[r][0] = b0;
    acc[r][1] = b1;
  }
  for (int p = 0; p < k; ++p, b += kGenericNr) {
    std::memcpy(&b0, b, sizeof b0);
    std::memcpy(&b1, b + 4, sizeof b1);
    for (int r = 0; r < M; ++r) {
      const float av = a[r * lda + p];
      acc[r][0] += av * b0;
      acc[r][1] += av * b1;
    }
  }
  for (int r = 0; r < M; ++r) std::memcpy(c + r * ldc, acc[r], sizeof acc[r]);
}

#if REBEL_X86

// AVX2 + FMA: 16 ymm registers hold a 6 x 16 tile (12 accumulators), 2 weight vectors and
// a broadcast.
constexpr int kAvx2Mr = 6, kAvx2Nr = 16;

template <int M>
__attribute__((target("avx2,fma"))) void tile_avx2(int k, const float* a, long lda, const float* b, const float* bias,
                                                   float* c, long ldc) {
  __m256 c0[M], c1[M];
  const __m256 bias0 = _mm256_load_ps(bias), bias1 = _mm256_load_ps(bias + 8);
#pragma GCC unroll 8
  for (int r = 0; r < M; ++r) {
    c0[r] = bias0;
    c1[r] = bias1;
  }
  for (int p = 0; p < k; ++p, b += kAvx2Nr) {
    const __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);
#pragma GCC unroll 8
    for (int r = 0; r < M; ++r) {
      const __m256 av = _mm256_broadcast_ss(a + r * lda + p);
      c0[r] = _mm256_fmadd_ps(av, b0, c0[r]);
      c1[r] = _mm256_fmadd_ps(av, b1, c1[r]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < M; ++r) {
    _mm256_storeu_ps(c + r * ldc, c0[r]);
    _mm256_storeu_ps(c + r * ldc + 8, c1[r]);
  }
}

// AVX-512: an 8 x 32 tile (16 zmm accumulators); 32 registers leave room to spare.
constexpr int kAvx512Mr = 8, kAvx512Nr = 32;

template <int M>
__attribute__((target("avx512f"))) void tile_avx512(int k, const float* a, long lda, const float* b,
                                                    const float* bias, float* c, long ldc) {
  __m512 c0[M], c1[M];
  const __m512 bias0 = _mm512_load_ps(bias), bias1 = _mm512_load_ps(bias + 16);
#pragma GCC unroll 8
  for (int r = 0; r < M; ++r) {
    c0[r] = bias0;
    c1[r] = bias1;
  }
  for (int p = 0; p < k; ++p, b += kAvx512Nr) {
    const __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16);
#pragma GCC unroll 8
    for (int r = 0; r < M; ++r) {
      const __m512 av = _mm512_set1_ps(a[r * lda + p]);
      c0[r] = _mm512_fmadd_ps(av, b0, c0[r]);
      c1[r] = _mm512_fmadd_ps(av, b1, c1[r]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < M; ++r) {
    _mm512_storeu_ps(c + r * ldc, c0[r]);
    _mm512_storeu_ps(c + r * ldc + 16, c1[r]);
  }
}

const GemmKernel kAvx512Kernel{"avx512", kAvx512Mr, kAvx512Nr,
                               {nullptr, tile_avx512<1>, tile_avx512<2>, tile_avx512<3>, tile_avx512<4>,
                                tile_avx512<5>, tile_avx512<6>, tile_avx512<7>, tile_avx512<8>}};
const GemmKernel kAvx2Kernel{"avx2", kAvx2Mr, kAvx2Nr,
                             {nullptr, tile_avx2<1>, tile_avx2<2>, tile_avx2<3>, tile_avx2<4>, tile_avx2<5>,
                              tile_avx2<6>, nullptr, nullptr}};

#endif  // REBEL_X86

const GemmKernel kGenericKernel{"generic", kGenericMr, kGenericNr,
                                {nullptr, tile_generic<1>, tile_generic<2>, tile_generic<3>, tile_generic<4>,
                                 nullptr, nullptr, nullptr, nullptr}};

std::vector<const GemmKernel*> supported_kernels() {
  std::vector<const GemmKernel*> out;
#if REBEL_X86
  if (cpu_features().avx512f) out.push_back(&kAvx512Kernel);
  if (cpu_features().avx2_fma) out.push_back(&kAvx2Kernel);
#endif
  out.push_back(&kGenericKernel);
  return out;
}

// ---------------------------------------------------------------------------------------
// Few-output layers: one dot product per (row, output), four outputs at a time so that
// four independent accumulator chains hide the FMA latency.

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
REBEL_SIMD_CLONES
void small_dense(const float* x, long ldx, int rows, const float* w, const float* bias, int out, int in, float* y,
                 long ldy) {
  using simd::kLanes;
  using simd::v16f;
  const int nv = in - in % kLanes;
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + r * ldx;
    float* yr = y + r * ldy;
    int j = 0;
    for (; j + 4 <= out; j += 4) {
      const float* w0 = w + static_cast<long>(j) * in;
      v16f acc[4] = {};
      int k = 0;
      for (; k < nv; k += kLanes) {
        const v16f xv = simd::load(xr + k);
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q) acc[q] += xv * simd::load(w0 + q * in + k);
      }
      for (int q = 0; q < 4; ++q) {
        float s = simd::hsum(acc[q]);
        for (int kk = k; kk < in; ++kk) s += xr[kk] * w0[q * in + kk];
        yr[j + q] = bias[j + q] + s;
      }
    }
    for (; j < out; ++j) {
      const float* wj = w + static_cast<long>(j) * in;
      v16f acc = {};
      int k = 0;
      for (; k < nv; k += kLanes) acc += simd::load(xr + k) * simd::load(wj + k);
      float s = simd::hsum(acc);
      for (; k < in; ++k) s += xr[k] * wj[k];
      yr[j] = bias[j] + s;
    }
  }
}
#pragma GCC diagnostic pop

}  // namespace

const GemmKernel& gemm_kernel(const std::string& isa) {
  const auto kernels = supported_kernels();
  if (isa == "auto") return *kernels.front();
  for (const GemmKernel* k : kernels)
    if (isa == k->isa) return *k;
  if (isa == "avx512" || isa == "avx2") throw std::invalid_argument("this CPU does not support isa '" + isa + "'");
  throw std::invalid_argument("unknown isa '" + isa + "' (expected auto, avx512, avx2 or generic)");
}

std::vector<std::string> supported_isas() {
  std::vector<std::string> out;
  for (const GemmKernel* k : supported_kernels()) out.emplace_back(k->isa);
  return out;
}

PackedLinear::PackedLinear(const GemmKernel& kernel, const float* weight, const float* bias, int out, int in)
    : kernel_(&kernel), in_(in), out_(out), panels_((out + kernel.nr - 1) / kernel.nr) {
  const int nr = kernel.nr;
  weight_.assign(static_cast<size_t>(panels_) * in * nr, 0.0f);
  bias_.assign(static_cast<size_t>(panels_) * nr, 0.0f);
  for (int o = 0; o < out; ++o) {
    const int p = o / nr, j = o % nr;
    float* panel = weight_.data() + static_cast<size_t>(p) * in * nr;
    for (int k = 0; k < in; ++k) panel[static_cast<size_t>(k) * nr + j] = weight[static_cast<size_t>(o) * in + k];
    bias_[o] = bias[o];
  }
}

void PackedLinear::forward(const float* x, long ldx, int rows, float* y, long ldy) const {
  const int mr = kernel_->mr, nr = kernel_->nr;
  // Panel-outer: a weight panel is reused from L1 by every row tile of the block.
  for (int p = 0; p < panels_; ++p) {
    const float* panel = weight_.data() + static_cast<size_t>(p) * in_ * nr;
    const float* b = bias_.data() + static_cast<size_t>(p) * nr;
    for (int r0 = 0; r0 < rows; r0 += mr) {
      const int m = std::min(mr, rows - r0);
      kernel_->tiles[m](in_, x + r0 * ldx, ldx, panel, b, y + r0 * ldy + p * nr, ldy);
    }
  }
}

SmallLinear::SmallLinear(const float* weight, const float* bias, int out, int in)
    : in_(in), out_(out), weight_(weight, weight + static_cast<size_t>(out) * in), bias_(bias, bias + out) {}

void SmallLinear::forward(const float* x, long ldx, int rows, float* y, long ldy) const {
  small_dense(x, ldx, rows, weight_.data(), bias_.data(), out_, in_, y, ldy);
}

}  // namespace rebel

#include "nets/gemm_int16.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "util/cpu_features.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define REBEL_INT16_KERNELS 1
#include <immintrin.h>
// GCC 12's AVX-512 headers build unmasked intrinsics on a self-initialised "undefined"
// vector, which -W(maybe-)uninitialized reports once inlined (a known false positive).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#else
#define REBEL_INT16_KERNELS 0
#endif

namespace rebel {

int int16_qmax(int in) {
  const double bound = std::floor(std::sqrt(2147483647.0 / std::max(1, in)));
  return static_cast<int>(std::min(32767.0, bound));
}

namespace {

// The row's quantisation factor qmax / max|x| and its scale max|x| / qmax; a row whose
// factor would overflow (all zero, or tiny) gets factor 0 and scale 0. Weight rows and
// activation rows follow the same rule.
void row_factors(float max_abs, int qmax, float* factor, float* scale) {
  const float q = static_cast<float>(qmax);
  const float f = max_abs > 0.0f ? q / max_abs : 0.0f;
  if (!std::isfinite(f) || f == 0.0f) {
    *factor = 0.0f;
    *scale = 0.0f;
  } else {
    *factor = f;
    *scale = max_abs / q;
  }
}

#if REBEL_INT16_KERNELS

// An M x 32 output tile in 2M int32 accumulators; per k pair, two weight vectors (32 columns
// x 2) and one broadcast of the row's int16 pair per row.
constexpr int kVnniMr = 8;

template <int M>
__attribute__((target("avx512f,avx512vnni"))) void tile_vnni(int kpairs, const int16_t* a, long lda,
                                                             const float* a_scale, const int16_t* b,
                                                             const float* w_scale, const float* bias, float* c,
                                                             long ldc) {
  __m512i c0[M], c1[M];
#pragma GCC unroll 8
  for (int r = 0; r < M; ++r) {
    c0[r] = _mm512_setzero_si512();
    c1[r] = _mm512_setzero_si512();
  }
  for (int p = 0; p < kpairs; ++p, b += 2 * kInt16PanelCols) {
    const __m512i b0 = _mm512_load_si512(b), b1 = _mm512_load_si512(b + 32);
#pragma GCC unroll 8
    for (int r = 0; r < M; ++r) {
      // The row's int16 pair, broadcast from memory inside the instruction ({1to16}). Written
      // in asm: with the intrinsic, GCC 12 copied every accumulator through spare registers
      // (and the stack) on each k pair, which left the kernel at about 60% of VPDPWSSD's rate.
      const int16_t* pair = a + r * lda + 2 * p;
      __asm__("vpdpwssd %[m]%{1to16%}, %[w], %[acc]" : [acc] "+v"(c0[r]) : [w] "v"(b0), [m] "m"(*(const int32_t*)pair));
      __asm__("vpdpwssd %[m]%{1to16%}, %[w], %[acc]" : [acc] "+v"(c1[r]) : [w] "v"(b1), [m] "m"(*(const int32_t*)pair));
    }
  }
  // y = bias + float(sum) * (s_w * s_x): a product then a sum, each rounded once, as the
  // reference computes it in float32 (the empty asm keeps the compiler from fusing them).
  const __m512 ws0 = _mm512_loadu_ps(w_scale), ws1 = _mm512_loadu_ps(w_scale + 16);
  const __m512 bias0 = _mm512_loadu_ps(bias), bias1 = _mm512_loadu_ps(bias + 16);
#pragma GCC unroll 8
  for (int r = 0; r < M; ++r) {
    const __m512 xs = _mm512_set1_ps(a_scale[r]);
    __m512 p0 = _mm512_mul_ps(_mm512_cvtepi32_ps(c0[r]), _mm512_mul_ps(ws0, xs));
    __m512 p1 = _mm512_mul_ps(_mm512_cvtepi32_ps(c1[r]), _mm512_mul_ps(ws1, xs));
    __asm__("" : "+v"(p0), "+v"(p1));
    _mm512_storeu_ps(c + r * ldc, _mm512_add_ps(p0, bias0));
    _mm512_storeu_ps(c + r * ldc + 16, _mm512_add_ps(p1, bias1));
  }
}

using VnniTile = void (*)(int, const int16_t*, long, const float*, const int16_t*, const float*, const float*, float*,
                          long);
constexpr VnniTile kVnniTiles[kVnniMr + 1] = {nullptr,      tile_vnni<1>, tile_vnni<2>, tile_vnni<3>, tile_vnni<4>,
                                              tile_vnni<5>, tile_vnni<6>, tile_vnni<7>, tile_vnni<8>};

void linear_vnni(const int16_t* a, long lda, const float* a_scale, int rows, int in, int k_pad, const int16_t* packed,
                 const float* w_scale, const float* bias, int panels, float* y, long ldy) {
  const int kpairs = (in + 1) / 2;  // the packed weights and `a` are zero past `in`
  for (int p = 0; p < panels; ++p) {
    const int16_t* panel = packed + static_cast<size_t>(p) * k_pad * kInt16PanelCols;
    for (int r0 = 0; r0 < rows; r0 += kVnniMr) {
      const int m = std::min(kVnniMr, rows - r0);
      kVnniTiles[m](kpairs, a + r0 * lda, lda, a_scale + r0, panel, w_scale + p * kInt16PanelCols,
                    bias + p * kInt16PanelCols, y + r0 * ldy + p * kInt16PanelCols, ldy);
    }
  }
}

const Int16Kernel kVnniKernel{"avx512vnni", linear_vnni};

__mmask16 tail_mask(int remaining) {
  return remaining >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << remaining) - 1u);
}

#endif  // REBEL_INT16_KERNELS

}  // namespace

#if REBEL_INT16_KERNELS

__attribute__((target("avx512f,avx512bw,avx512vl"))) void quantize_rows_int16(const float* x, long ldx, int rows,
                                                                              int n, int qmax, int16_t* q, int n_pad,
                                                                              float* scale, int block_rows) {
  const __m512i hi = _mm512_set1_epi32(qmax), lo = _mm512_set1_epi32(-qmax);
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + r * ldx;
    int16_t* o = q + static_cast<long>(r) * n_pad;
    __m512 m = _mm512_setzero_ps();
    for (int k = 0; k < n; k += 16) m = _mm512_max_ps(m, _mm512_abs_ps(_mm512_maskz_loadu_ps(tail_mask(n - k), xr + k)));
    float factor;
    row_factors(_mm512_reduce_max_ps(m), qmax, &factor, &scale[r]);
    const __m512 f = _mm512_set1_ps(factor);
    for (int k = 0; k < n; k += 16) {
      const __mmask16 mask = tail_mask(n - k);
      // Round to nearest even (the MXCSR default, which nothing here changes), then clamp:
      // x * factor can round a hair past qmax.
      __m512i v = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_maskz_loadu_ps(mask, xr + k), f));
      v = _mm512_max_epi32(_mm512_min_epi32(v, hi), lo);
      _mm256_mask_storeu_epi16(o + k, mask, _mm512_cvtepi32_epi16(v));
    }
    std::fill(o + n, o + n_pad, int16_t{0});
  }
  for (int r = rows; r < block_rows; ++r) {
    std::fill(q + static_cast<long>(r) * n_pad, q + static_cast<long>(r + 1) * n_pad, int16_t{0});
    scale[r] = 0.0f;
  }
}

#else

void quantize_rows_int16(const float*, long, int, int, int, int16_t*, int, float*, int) {
  throw std::logic_error("the int16 path needs x86-64 AVX-512");
}

#endif

namespace {

std::vector<const Int16Kernel*> supported_kernels() {
  std::vector<const Int16Kernel*> out;
#if REBEL_INT16_KERNELS
  if (cpu_features().avx512vnni) out.push_back(&kVnniKernel);
#endif
  return out;
}

}  // namespace

const Int16Kernel& int16_kernel(const std::string& isa) {
  const auto kernels = supported_kernels();
  if (isa == "auto" || isa == "avx512vnni") {
    if (kernels.empty()) {
      throw std::invalid_argument(
          "precision 'int16' needs a CPU with AVX512_VNNI, and this one has none; use precision 'fp32' (or 'auto', "
          "which falls back to fp32)");
    }
    return *kernels.front();
  }
  throw std::invalid_argument("unknown int16 isa '" + isa + "' (expected auto or avx512vnni)");
}

std::vector<std::string> supported_int16_isas() {
  std::vector<std::string> out;
  for (const Int16Kernel* k : supported_kernels()) out.emplace_back(k->isa);
  return out;
}

Int16Linear::Int16Linear(const Int16Kernel& kernel, const float* weight, const float* bias, int out, int in)
    : kernel_(&kernel),
      in_(in),
      out_(out),
      qmax_(int16_qmax(in)),
      k_pad_(std::max(kInt16KBlock, (in + kInt16KBlock - 1) / kInt16KBlock * kInt16KBlock)),
      panels_((out + kInt16PanelCols - 1) / kInt16PanelCols) {
  weight_.assign(static_cast<size_t>(panels_) * k_pad_ * kInt16PanelCols, int16_t{0});
  w_scale_.assign(static_cast<size_t>(panels_) * kInt16PanelCols, 0.0f);
  bias_.assign(static_cast<size_t>(panels_) * kInt16PanelCols, 0.0f);
  // The weights arrive finite (parse_mlp_weights checks every value).
  const float q = static_cast<float>(qmax_);
  for (int o = 0; o < out; ++o) {
    const float* row = weight + static_cast<size_t>(o) * in;
    float max_abs = 0.0f;
    for (int k = 0; k < in; ++k) max_abs = std::max(max_abs, std::fabs(row[k]));
    float factor, s;
    row_factors(max_abs, qmax_, &factor, &s);
    const int p = o / kInt16PanelCols, j = o % kInt16PanelCols;
    int16_t* panel = weight_.data() + static_cast<size_t>(p) * k_pad_ * kInt16PanelCols;
    if (s > 0.0f) {
      for (int k = 0; k < in; ++k) {
        const float v = std::nearbyint(row[k] / s);
        panel[(static_cast<size_t>(k / 2) * kInt16PanelCols + j) * 2 + k % 2] =
            static_cast<int16_t>(std::min(q, std::max(-q, v)));
      }
      w_scale_[o] = s;
    }
    bias_[o] = bias[o];
  }
}

void Int16Linear::forward(const int16_t* a, const float* a_scale, int rows, float* y, long ldy) const {
  kernel_->linear(a, k_pad_, a_scale, rows, in_, k_pad_, weight_.data(), w_scale_.data(), bias_.data(), panels_, y,
                  ldy);
}

}  // namespace rebel

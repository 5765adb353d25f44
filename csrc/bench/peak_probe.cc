#include "bench/peak_probe.h"

#include <chrono>
#include <stdexcept>

#include "nets/gemm_bf16.h"
#include "util/cpu_features.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define REBEL_PEAK_PROBES 1
// GCC 12's AVX-512 headers: a known false positive once inlined (see activations_bf16.cc).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#else
#define REBEL_PEAK_PROBES 0
#endif

namespace rebel {

namespace {

#if REBEL_PEAK_PROBES

// Each probe issues independent instructions on register-resident data (no memory traffic,
// enough accumulators to cover the latency), so the rate is the units' issue rate.
constexpr int kChains = 16;

// A chain of dependent integer adds retires one per cycle: its rate is the core clock
// (turbo included, which /proc/cpuinfo's nominal "cpu MHz" is not, under a hypervisor).
// (Register operands: recent Intel cores fold additions of an immediate at rename.)
__attribute__((noinline)) double add_chain(long reps) {
  unsigned long x = 0, one = 1;
  __asm__ volatile("" : "+r"(one));
  for (long r = 0; r < reps; ++r) {
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) __asm__ volatile("add %1, %0" : "+r"(x) : "r"(one));
  }
  return static_cast<double>(x);
}

__attribute__((target("avx512f"), noinline)) double fma512(long reps) {
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i));
  __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(1.0001f);
  for (long r = 0; r < reps; ++r) {
#pragma GCC unroll 16
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(a, b, acc[i]);
    __asm__ volatile("" : "+v"(a));
  }
  __m512 s = acc[0];
  for (int i = 1; i < kChains; ++i) s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"), noinline)) double fma256(long reps) {
  __m256 acc[kChains / 2];
  for (int i = 0; i < kChains / 2; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i));
  __m256 a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(1.0001f);
  for (long r = 0; r < reps; ++r) {
#pragma GCC unroll 8
    for (int i = 0; i < kChains / 2; ++i) acc[i] = _mm256_fmadd_ps(a, b, acc[i]);
    __asm__ volatile("" : "+x"(a));
  }
  float out[8];
  __m256 s = acc[0];
  for (int i = 1; i < kChains / 2; ++i) s = _mm256_add_ps(s, acc[i]);
  _mm256_storeu_ps(out, s);
  return out[0];
}

__attribute__((target("avx512f,avx512bf16"), noinline)) double dpbf16(long reps) {
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i));
  __m512bh a = (__m512bh)_mm512_set1_epi16(0x3f80), b = (__m512bh)_mm512_set1_epi16(0x3f80);
  for (long r = 0; r < reps; ++r) {
#pragma GCC unroll 16
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_dpbf16_ps(acc[i], a, b);
    __asm__ volatile("" : "+v"(a));
  }
  __m512 s = acc[0];
  for (int i = 1; i < kChains; ++i) s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx512f,avx512vnni"), noinline)) double dpwssd(long reps) {
  __m512i acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_epi32(i);
  __m512i a = _mm512_set1_epi16(3), b = _mm512_set1_epi16(5);
  for (long r = 0; r < reps; ++r) {
#pragma GCC unroll 16
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_dpwssd_epi32(acc[i], a, b);
    __asm__ volatile("" : "+v"(a));
  }
  __m512i s = acc[0];
  for (int i = 1; i < kChains; ++i) s = _mm512_add_epi32(s, acc[i]);
  return static_cast<double>(_mm512_reduce_add_epi32(s));
}

// The tiles are configured as the AMX kernel configures them (16 rows of 64 bytes each).
__attribute__((target("amx-tile,amx-bf16"), noinline)) double amx(long reps) {
  const Bf16Scope scope(bf16_kernel("amx"));
  alignas(64) uint16_t ones[16 * 32];
  for (uint16_t& v : ones) v = 0x3f80;  // bf16 1.0
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, ones, 64);
  _tile_loadd(5, ones, 64);
  _tile_loadd(6, ones, 64);
  _tile_loadd(7, ones, 64);
  for (long r = 0; r < reps; ++r) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  alignas(64) float out[16 * 16];
  _tile_stored(0, out, 64);
  return out[0];
}

#endif

// Runs probe(reps) with reps doubled until one call takes >= `seconds`; returns flops/s.
template <class Probe>
double rate(Probe probe, double flops_per_rep, double seconds) {
  for (long reps = 1024;; reps *= 2) {
    const auto t0 = std::chrono::steady_clock::now();
    volatile double sink = probe(reps);
    (void)sink;
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (dt >= seconds || reps > (1L << 40)) return flops_per_rep * static_cast<double>(reps) / dt;
  }
}

}  // namespace

double peak_probe_flops(const std::string& kind, double seconds) {
#if REBEL_PEAK_PROBES
  const CpuFeatures& f = cpu_features();
  if (kind == "clock") return rate(add_chain, 16.0, seconds);
  if (kind == "fma512" && f.avx512f) return rate(fma512, kChains * 16 * 2.0, seconds);
  if (kind == "fma256" && f.avx2_fma) return rate(fma256, kChains / 2 * 8 * 2.0, seconds);
  if (kind == "dpbf16" && f.avx512bf16) return rate(dpbf16, kChains * 32 * 2.0, seconds);
  if (kind == "amx" && f.amx_bf16) return rate(amx, 4 * 16 * 16 * 32 * 2.0, seconds);
  if (kind == "dpwssd" && f.avx512vnni) return rate(dpwssd, kChains * 32 * 2.0, seconds);
#endif
  if (kind == "fma512" || kind == "fma256" || kind == "dpbf16" || kind == "amx" || kind == "dpwssd") {
    throw std::invalid_argument("this CPU cannot run the '" + kind + "' probe");
  }
  throw std::invalid_argument("unknown probe '" + kind + "' (expected clock, fma512, fma256, dpbf16, amx or dpwssd)");
}

}  // namespace rebel

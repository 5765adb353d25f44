#include "util/cpu_features.h"

#include <cstdlib>
#include <sstream>
#include <string>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#define REBEL_X86_64 1
#else
#define REBEL_X86_64 0
#endif

namespace rebel {

namespace {

bool disabled_by_env(const char* name) {
  const char* env = std::getenv("REBEL_CPU_DISABLE");
  if (!env) return false;
  std::stringstream list(env);
  std::string item;
  while (std::getline(list, item, ',')) {
    if (item == name) return true;
  }
  return false;
}

#if REBEL_X86_64

// XCR0: which register states the OS saves (AVX-512 needs opmask + ZMM, AMX needs XTILE).
unsigned long long xcr0() {
  unsigned eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<unsigned long long>(edx) << 32) | eax;
}

// Linux hands out the AMX tile state only on request (arch_prctl ARCH_REQ_XCOMP_PERM).
bool request_amx_permission() {
#if defined(__linux__)
  constexpr long kArchReqXcompPerm = 0x1023;
  constexpr long kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}

CpuFeatures detect() {
  CpuFeatures f;
  unsigned a, b, c, d;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return f;
  const bool amd = b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u;  // "AuthenticAMD"
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool osxsave = c & (1u << 27);
  if (!osxsave) return f;
  const unsigned long long xcr = xcr0();
  const bool os_avx = (xcr & 0x6) == 0x6;
  const bool os_avx512 = os_avx && (xcr & 0xe0) == 0xe0;
  const bool os_amx = (xcr & (3ull << 17)) == (3ull << 17);
  const bool fma = c & (1u << 12);
  if (__get_cpuid_max(0, nullptr) < 7) return f;
  __cpuid_count(7, 0, a, b, c, d);
  const bool avx2 = b & (1u << 5), avx512f = b & (1u << 16);
  const bool avx512bw_vl = (b & (1u << 30)) && (b & (1u << 31));
  const bool amx_bf16 = d & (1u << 22), amx_tile = d & (1u << 24);
  const bool vnni = c & (1u << 11);
  unsigned a1 = 0, b1, c1, d1;
  __cpuid_count(7, 1, a1, b1, c1, d1);
  const bool avx512bf16 = a1 & (1u << 5);

  f.avx2_fma = os_avx && avx2 && fma && !disabled_by_env("avx2");
  f.avx512f = os_avx512 && avx512f && !disabled_by_env("avx512");
  // The bf16 path's activations use AVX-512 F/BW/VL; the AMX kernel also asks for AVX512_BF16,
  // which every CPU with AMX-BF16 has.
  const bool bf16_activations = f.avx512f && avx512bw_vl && avx512bf16;
  f.avx512bf16 = bf16_activations && !disabled_by_env("avx512bf16");
  f.amx_bf16 = bf16_activations && os_amx && amx_tile && amx_bf16 && !disabled_by_env("amx") &&
               request_amx_permission();
  // Measured: with AMX, the AMX kernel runs the 2 x 256 net 2.1-2.3x faster than fp32. An
  // Intel core issues one VDPBF16PS every two cycles against two fp32 FMAs per cycle (half
  // the products: the avx512bf16 kernel ran at 0.7x of fp32 on a Sapphire Rapids class core);
  // AMD Zen 4 runs VDPBF16PS at its FMA rate, twice the products: measured on a family 25,
  // model 17 EPYC, the avx512bf16 kernel runs the net 1.72x fp32 and self-play 1.75-1.91x
  // (docs/performance.md), so auto picks bf16 on AMD CPUs with AVX512_BF16.
  f.bf16_faster = f.amx_bf16 || (f.avx512bf16 && amd);
  f.avx512vnni = f.avx512f && avx512bw_vl && vnni && !disabled_by_env("avx512vnni");
  // Measured on an Intel Xeon with AVX512_BF16 and VNNI but no AMX: VPDPWSSD issues at the
  // fp32 FMA's rate with twice the products, and the int16 kernel runs the 2 x 256 net
  // faster than fp32 (docs/performance.md). Where a faster bf16 kernel exists it stays first.
  f.int16_faster = f.avx512vnni && !f.bf16_faster;
  return f;
}

#else

CpuFeatures detect() { return CpuFeatures{}; }

#endif

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

}  // namespace rebel

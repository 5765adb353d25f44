// Portable 16-lane float vectors (GCC/Clang vector extensions) for kernels compiled with
// target_clones: the same source becomes AVX-512, AVX2 or SSE code per clone. Helpers
// are always_inline so they take the caller's instruction set (and never pass vectors
// across a call, which would change the ABI between clones).
#pragma once

#include <cstring>

// Function multiversioning: one clone per instruction set, picked at load time (ifunc).
// Off under ThreadSanitizer, whose instrumented ifunc resolvers crash before it starts.
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__SANITIZE_THREAD__)
#define REBEL_SIMD_CLONES __attribute__((target_clones("avx512f", "arch=x86-64-v3", "default")))
#else
#define REBEL_SIMD_CLONES
#endif

// Forces inlining, so that a helper takes the instruction set of the clone that calls it.
#define REBEL_ALWAYS_INLINE inline __attribute__((always_inline))

namespace rebel::simd {

typedef float v16f __attribute__((vector_size(64)));
typedef float v8f __attribute__((vector_size(32)));
typedef float v4f __attribute__((vector_size(16)));
inline constexpr int kLanes = 16;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

__attribute__((always_inline)) inline v16f load(const float* p) {
  v16f v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

__attribute__((always_inline)) inline void store(float* p, const v16f& v) { std::memcpy(p, &v, sizeof v); }

// Sum of the 16 lanes by halving (3 vector adds, then 3 scalar adds).
__attribute__((always_inline)) inline float hsum(const v16f& v) {
  v8f lo, hi;
  std::memcpy(&lo, &v, sizeof lo);
  std::memcpy(&hi, reinterpret_cast<const char*>(&v) + sizeof lo, sizeof hi);
  const v8f s8 = lo + hi;
  v4f a, b;
  std::memcpy(&a, &s8, sizeof a);
  std::memcpy(&b, reinterpret_cast<const char*>(&s8) + sizeof a, sizeof b);
  const v4f s4 = a + b;
  return (s4[0] + s4[1]) + (s4[2] + s4[3]);
}

#pragma GCC diagnostic pop

}  // namespace rebel::simd

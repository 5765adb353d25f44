// Denormal floats (magnitude below 2^-126) cost x86 cores a microcode assist per operation,
// tens to hundreds of cycles. Trained weights collect them (weight decay shrinks unused
// weights towards zero): the 6x6 AlphaZero net's forward and backward ran 2.5x slower after
// 60 epochs because of 0.3% denormal weights. Their values are below any precision a net
// forward carries, so the native kernels treat them as zero.
#pragma once

#if defined(__x86_64__) || defined(__SSE__)
#include <xmmintrin.h>
#define REBEL_HAS_MXCSR 1
#endif

namespace rebel {

// Sets flush-to-zero and denormals-are-zero on this thread's MXCSR for the scope's lifetime,
// restoring the caller's setting on exit (the caller may be Python's thread: its numpy and
// torch arithmetic must keep their IEEE behaviour). A no-op where the CPU has no MXCSR.
class FlushDenormalsScope {
 public:
#ifdef REBEL_HAS_MXCSR
  FlushDenormalsScope() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | kFtz | kDaz); }
  ~FlushDenormalsScope() { _mm_setcsr(saved_); }
#else
  FlushDenormalsScope() = default;
#endif
  FlushDenormalsScope(const FlushDenormalsScope&) = delete;
  FlushDenormalsScope& operator=(const FlushDenormalsScope&) = delete;

 private:
#ifdef REBEL_HAS_MXCSR
  static constexpr unsigned kFtz = 0x8000;  // flush denormal results to zero
  static constexpr unsigned kDaz = 0x0040;  // read denormal inputs as zero
  unsigned saved_;
#endif
};

}  // namespace rebel

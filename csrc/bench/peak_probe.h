// Measured peak arithmetic rates of this core, for the benchmarks' "fraction of peak": each
// probe issues independent multiply-add instructions on register-resident data.
//   clock: a chain of dependent integer adds (one per cycle: the rate is cycles per second),
//   fma512: AVX-512 fp32 FMA (32 flops per instruction), fma256: AVX2 fp32 FMA (16),
//   dpbf16: AVX512_BF16 VDPBF16PS (64), amx: AMX-BF16 TDPBF16PS on 16 x 16 x 32 tiles (16,384).
#pragma once

#include <string>

namespace rebel {

// flops (for clock: cycles) per second of `kind` on the calling thread, timed over about `seconds`. Throws
// std::invalid_argument for an unknown kind or one this CPU cannot run.
double peak_probe_flops(const std::string& kind, double seconds);

}  // namespace rebel

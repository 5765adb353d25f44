// Which vector instruction sets the kernels may use on this CPU, read once.
//
// REBEL_CPU_DISABLE (comma-separated: avx512, avx2, avx512bf16, amx, avx512vnni) hides features from the
// kernel selection, as if this CPU lacked them: the way to test the fallbacks on a CPU that
// has everything.
#pragma once

namespace rebel {

struct CpuFeatures {
  bool avx2_fma = false;
  bool avx512f = false;
  bool avx512bf16 = false;  // VDPBF16PS (and AVX-512 F/BW/VL, AVX512_BF16)
  bool bf16_faster = false;  // a bf16 kernel here beats fp32 (what precision "auto" follows)
  bool avx512vnni = false;  // VPDPWSSD (and AVX-512 F/BW/VL): the int16 kernel
  bool int16_faster = false;  // precision "auto" picks int16 here (no faster bf16 kernel, VNNI at the FMA rate)
  bool amx_bf16 = false;    // AMX-TILE + AMX-BF16 enabled by the OS for this process (and AVX-512 F/BW/VL, AVX512_BF16)
};

const CpuFeatures& cpu_features();

}  // namespace rebel

// 64-byte aligned float storage for packed weights and activations (one cache line, one
// AVX-512 register), so kernels can use aligned vector loads.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace rebel {

inline constexpr std::size_t kSimdAlignment = 64;

template <class T>
struct AlignedAllocator {
  using value_type = T;

  AlignedAllocator() noexcept = default;
  template <class U>
  AlignedAllocator(const AlignedAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(kSimdAlignment)));
  }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, std::align_val_t(kSimdAlignment)); }

  template <class U>
  bool operator==(const AlignedAllocator<U>&) const noexcept { return true; }
  template <class U>
  bool operator!=(const AlignedAllocator<U>&) const noexcept { return false; }
};

using AlignedFloats = std::vector<float, AlignedAllocator<float>>;

}  // namespace rebel

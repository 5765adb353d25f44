// AtomicSnapshot<T>: a shared_ptr<const T> that one thread may replace while others read it.
// Readers take a snapshot (load) and keep using it for as long as they hold it, so a batch
// that started with one set of weights finishes with them while set_weights() installs the
// next. The value nets and the policy nets share it; it is the one place that touches the
// shared_ptr atomic free functions (C++20's std::atomic<std::shared_ptr<T>> replaces them).
#pragma once

#include <atomic>
#include <memory>
#include <utility>

namespace rebel {

template <class T>
class AtomicSnapshot {
 public:
  using Ptr = std::shared_ptr<const T>;

  AtomicSnapshot() = default;
  explicit AtomicSnapshot(Ptr value) : value_(std::move(value)) {}
  AtomicSnapshot(const AtomicSnapshot&) = delete;
  AtomicSnapshot& operator=(const AtomicSnapshot&) = delete;

  Ptr load() const { return std::atomic_load(&value_); }
  void store(Ptr value) { std::atomic_store(&value_, std::move(value)); }

 private:
  Ptr value_;  // only accessed through std::atomic_load / std::atomic_store
};

}  // namespace rebel

// A fork-join pool whose workers spin between jobs: for loops run many times a second (the
// chance nodes of one CFR iteration), where starting threads per loop (util/parallel_for.h)
// would cost more than the work. Workers live as long as the pool; make one per long call
// (a solve), not one per object that idles, since a spinning worker holds its core.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define REBEL_SPIN_PAUSE() _mm_pause()
#else
#define REBEL_SPIN_PAUSE() std::this_thread::yield()
#endif

namespace rebel {

class SpinPool {
 public:
  // `threads` in all, the calling thread included (1: no workers, loops run inline).
  explicit SpinPool(int threads) {
    for (int i = 1; i < std::max(threads, 1); ++i) workers_.emplace_back([this, i] { work_loop(i); });
  }
  ~SpinPool() {
    stop_.store(true, std::memory_order_release);
    for (auto& t : workers_) t.join();
  }
  SpinPool(const SpinPool&) = delete;
  SpinPool& operator=(const SpinPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls f(i, thread) for every i in [0, count), thread in [0, threads()) naming the thread
  // that runs it (0: the caller). Not reentrant: f must not call run. The first exception
  // is rethrown here after every thread has stopped.
  void run(size_t count, const std::function<void(size_t, int)>& f) {
    if (workers_.empty() || count <= 1) {
      for (size_t i = 0; i < count; ++i) f(i, 0);
      return;
    }
    job_ = &f;
    count_ = count;
    next_.store(0, std::memory_order_relaxed);
    busy_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    take(0);
    for (int spins = 0; busy_.load(std::memory_order_acquire) != 0; ++spins) backoff(spins);
    job_ = nullptr;
    if (error_) {
      std::exception_ptr e = error_;
      error_ = nullptr;
      failed_.store(false, std::memory_order_relaxed);
      std::rethrow_exception(e);
    }
  }

 private:
  void take(int thread) {
    try {
      for (size_t i = next_.fetch_add(1, std::memory_order_relaxed); i < count_ && !failed_.load(std::memory_order_relaxed);
           i = next_.fetch_add(1, std::memory_order_relaxed)) {
        (*job_)(i, thread);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
      failed_.store(true, std::memory_order_relaxed);
    }
  }

  // Spin briefly, then yield the core: on a machine with more threads than free cores a
  // spinning waiter would otherwise hold the core the thread it waits for needs.
  static void backoff(int spins) {
    if (spins < 4096) {
      REBEL_SPIN_PAUSE();
    } else {
      std::this_thread::yield();
    }
  }

  void work_loop(int thread) {
    uint64_t seen = 0;
    int spins = 0;
    while (true) {
      const uint64_t g = generation_.load(std::memory_order_acquire);
      if (g != seen) {
        seen = g;
        spins = 0;
        take(thread);
        busy_.fetch_sub(1, std::memory_order_acq_rel);
      } else if (stop_.load(std::memory_order_acquire)) {
        return;
      } else {
        backoff(spins++);
      }
    }
  }

  std::vector<std::thread> workers_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<size_t> next_{0};
  std::atomic<int> busy_{0};
  std::atomic<bool> stop_{false};
  std::atomic<bool> failed_{false};
  const std::function<void(size_t, int)>* job_ = nullptr;
  size_t count_ = 0;
  std::mutex mutex_;
  std::exception_ptr error_;
};

}  // namespace rebel

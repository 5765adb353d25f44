// A small fork-join loop for the core's embarrassingly parallel work (subgame solves of
// test-time search, perfect-information states): no pool outlives the call.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace rebel {

// Calls f(i) for every i in [0, count) on up to `threads` threads, the calling thread being
// one of them (alone when one suffices). Indices are handed out one at a time, so callers
// that write only slot i get results that do not depend on the thread count. The first
// exception thrown stops the hand-out of further indices and is rethrown here once every
// thread has finished.
template <class F>
void parallel_for(size_t count, int threads, F&& f) {
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::exception_ptr error;
  auto worker = [&] {
    try {
      for (size_t i = next.fetch_add(1); i < count && !failed.load(); i = next.fetch_add(1)) f(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!error) error = std::current_exception();
      failed = true;
    }
  };
  const size_t workers = std::min(count, static_cast<size_t>(std::max(threads, 1)));
  std::vector<std::thread> pool;
  for (size_t i = 1; i < workers; ++i) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace rebel

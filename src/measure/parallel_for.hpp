// The builders' worker pool: runs one task per index on a few threads, the caller's included.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace tunekit {

/// Calls `body(i)` once for each i in [0, count), on up to `workers` threads (the calling thread
/// is one of them); returns when all are done. Indices are taken in increasing order.
template <class Body>
void parallel_for(std::size_t count, std::size_t workers, Body&& body) {
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < count; i = next++) body(i);
  };
  std::vector<std::thread> threads;
  for (std::size_t t = 1; t < std::min(workers, count); ++t) threads.emplace_back(work);
  work();
  for (auto& thread : threads) thread.join();
}

}  // namespace tunekit

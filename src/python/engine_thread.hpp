// Running engine work (tuning, builds) on a thread of its own while the calling Python thread
// waits without the GIL, watching for signals (Ctrl-C) every 50 ms.
#pragma once

#include <nanobind/nanobind.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

namespace tunekit::python {

/// Runs `work()` on a new thread and waits for it with the GIL released. Every 50 ms the waiting
/// thread takes the GIL and runs Python's signal handlers (PyErr_CheckSignals); when one raises
/// (KeyboardInterrupt), `on_signal()` is called once, with the GIL held and the exception set
/// (it fetches it), and the wait goes on until the work returns. An exception of `work` is
/// rethrown here.
/// Why a thread of its own: the GEMM layer's library namespaces (dlmopen'd BLIS) clobber
/// thread-specific data of threads their code ran on, which crashed OpenSSL (the artefact
/// cache's SHA-256) on the Python thread after tunekit.matmul; a fresh thread is clean.
template <class Work, class OnSignal>
void run_on_engine_thread(Work&& work, OnSignal&& on_signal) {
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  std::exception_ptr failure;
  nanobind::gil_scoped_release unlocked;
  std::thread worker([&] {
    try {
      work();
    } catch (...) {
      failure = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
    cv.notify_all();
  });
  bool signalled = false;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex);
      if (cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return done; })) break;
    }
    if (signalled) continue;
    nanobind::gil_scoped_acquire locked;
    if (PyErr_CheckSignals() != 0) {
      signalled = true;
      on_signal();
    }
  }
  worker.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace tunekit::python

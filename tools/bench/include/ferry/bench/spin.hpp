#pragma once
// Busy-waiting for a peer in another process, without hanging on a dead one.

#include <cstdint>
#include <thread>

#include "ferry/bench/clock.hpp"
#include "ferry/transport/platform.hpp"
#include "ferry/transport/spin.hpp"

namespace ferry::bench {

// Polls `ok()` until it returns true; false once `timeout_ns` passed (the
// clock is read only every 2^16 polls: a dead peer must not hang us, a live
// one must not pay for a clock read). After ~1000 steps (~150 us, far beyond
// any answer from a running peer) it yields between polls: the peer is then
// descheduled, likely waiting for our CPU on a shared machine, and burning
// our time slice would only delay it.
template <class F>
bool spin_until(F&& ok, std::int64_t timeout_ns = 5'000'000'000) {
  std::int64_t deadline = 0;
  for (std::uint64_t i = 1;; ++i) {
    if (ok()) return true;
    if (i < 1024) {
      transport::spin_wait_step();
    } else {
      std::this_thread::yield();
    }
    if ((i & 0xffff) == 0) {
      const std::int64_t now = now_ns();
      if (deadline == 0) {
        deadline = now + timeout_ns;
      } else if (now > deadline) {
        return false;
      }
    }
  }
}

}  // namespace ferry::bench

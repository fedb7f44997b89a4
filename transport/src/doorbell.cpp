#include "ferry/transport/doorbell.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

namespace ferry::transport {

namespace {
std::uint32_t* futex_address(std::atomic<std::uint32_t>& word) noexcept {
  // std::atomic<uint32_t> is exactly one 32-bit word (static_assert in the header).
  return reinterpret_cast<std::uint32_t*>(&word);
}
}  // namespace

FutexResult futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                       std::chrono::nanoseconds timeout) noexcept {
  if (timeout.count() <= 0) return FutexResult::TimedOut;
  constexpr std::int64_t kMaxSeconds = 365LL * 24 * 3600;  // clamp absurd timeouts
  const std::int64_t ns = timeout.count();
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000 > kMaxSeconds ? kMaxSeconds : ns / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(ns % 1'000'000'000);
  // No FUTEX_PRIVATE_FLAG: the word is in shared memory and the waker may be
  // another process. FUTEX_WAIT's timeout is relative, on CLOCK_MONOTONIC.
  const long rc = ::syscall(SYS_futex, futex_address(word), FUTEX_WAIT, expected, &ts, nullptr, 0);
  if (rc == 0) return FutexResult::Woken;
  switch (errno) {
    case EAGAIN: return FutexResult::ValueChanged;
    case ETIMEDOUT: return FutexResult::TimedOut;
    case EINTR: return FutexResult::Interrupted;
    default: return FutexResult::Error;
  }
}

int futex_wake(std::atomic<std::uint32_t>& word, int count) noexcept {
  const long rc = ::syscall(SYS_futex, futex_address(word), FUTEX_WAKE, count, nullptr, nullptr, 0);
  return rc < 0 ? 0 : static_cast<int>(rc);
}

}  // namespace ferry::transport

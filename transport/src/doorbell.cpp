#include "ferry/transport/doorbell.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <cerrno>

namespace ferry::transport {

namespace {
std::uint32_t* futex_address(std::atomic<std::uint32_t>& word) noexcept {
  // std::atomic<uint32_t> is exactly one 32-bit word (static_assert in the header).
  return reinterpret_cast<std::uint32_t*>(&word);
}

// What a futex wait that returned -1 means, from its errno.
FutexResult failed_wait_result(int error) noexcept {
  switch (error) {
    case EAGAIN:
      return FutexResult::ValueChanged;
    case ETIMEDOUT:
      return FutexResult::TimedOut;
    case EINTR:
      return FutexResult::Interrupted;
    default:
      return FutexResult::Error;
  }
}
}  // namespace

FutexResult futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                       std::chrono::nanoseconds timeout) noexcept {
  if (timeout.count() <= 0) return FutexResult::TimedOut;
  constexpr std::int64_t kMaxSeconds = 365LL * 24 * 3600;  // clamp absurd timeouts
  const std::int64_t ns = timeout.count();
  timespec ts{};
  ts.tv_sec =
      static_cast<time_t>(ns / 1'000'000'000 > kMaxSeconds ? kMaxSeconds : ns / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(ns % 1'000'000'000);
  // No FUTEX_PRIVATE_FLAG: the word is in shared memory and the waker may be
  // another process. FUTEX_WAIT's timeout is relative, on CLOCK_MONOTONIC.
  const long rc = ::syscall(SYS_futex, futex_address(word), FUTEX_WAIT, expected, &ts, nullptr, 0);
  return rc == 0 ? FutexResult::Woken : failed_wait_result(errno);
}

FutexResult futex_wait_any(const std::atomic<std::uint32_t>* const* words,
                           const std::uint32_t* expected, std::size_t count,
                           std::chrono::nanoseconds timeout) noexcept {
  if (timeout.count() <= 0) return FutexResult::TimedOut;
  if (count == 0 || count > kMaxWaitWords) return FutexResult::Error;
  std::array<futex_waitv, kMaxWaitWords> waiters{};  // on the stack: no allocation
  for (std::size_t i = 0; i < count; ++i) {
    waiters[i].val = expected[i];
    waiters[i].uaddr = reinterpret_cast<std::uintptr_t>(words[i]);
    // Shared (no FUTEX2_PRIVATE): notifiers in other processes, and our own
    // notify() with the shared futex_wake, must find the same key.
    waiters[i].flags = FUTEX_32;
  }
  // futex_waitv takes an absolute deadline on the clock it is given.
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  constexpr std::int64_t kMaxNs = 365LL * 24 * 3600 * 1'000'000'000;  // clamp absurd timeouts
  const std::int64_t ns = timeout.count() > kMaxNs ? kMaxNs : timeout.count();
  std::int64_t sec = now.tv_sec + ns / 1'000'000'000;
  std::int64_t nsec = now.tv_nsec + ns % 1'000'000'000;
  if (nsec >= 1'000'000'000) {
    ++sec;
    nsec -= 1'000'000'000;
  }
  timespec deadline{};
  deadline.tv_sec = static_cast<time_t>(sec);
  deadline.tv_nsec = static_cast<long>(nsec);
  const long rc = ::syscall(SYS_futex_waitv, waiters.data(), static_cast<unsigned>(count), 0u,
                            &deadline, CLOCK_MONOTONIC);
  return rc >= 0 ? FutexResult::Woken : failed_wait_result(errno);
}

int futex_wake(std::atomic<std::uint32_t>& word, int count) noexcept {
  const long rc = ::syscall(SYS_futex, futex_address(word), FUTEX_WAKE, count, nullptr, nullptr, 0);
  return rc < 0 ? 0 : static_cast<int>(rc);
}

}  // namespace ferry::transport

#pragma once
// One-way messages between a test and a forked child over a pipe made before
// the fork, so both sides hold both ends: Signal (an event) and ValuePipe (a u64).

#include <doctest/doctest.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace ferry::test {

// The pipe both share: bytes written at one end, read with a timeout at the other.
class Pipe {
 public:
  Pipe() { REQUIRE(::pipe(fds_) == 0); }
  ~Pipe() {
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;

 protected:
  void put(const void* data, std::size_t size) const { (void)!::write(fds_[1], data, size); }
  // True when `size` bytes arrived within `timeout`.
  [[nodiscard]] bool get(void* data, std::size_t size, std::chrono::milliseconds timeout) const {
    pollfd p{fds_[0], POLLIN, 0};
    return ::poll(&p, 1, static_cast<int>(timeout.count())) == 1 &&
           ::read(fds_[0], data, size) == static_cast<ssize_t>(size);
  }

 private:
  int fds_[2]{};
};

class Signal : private Pipe {
 public:
  void raise() const { put("x", 1); }
  // True when raised (once per raise) within `timeout`.
  [[nodiscard]] bool wait(std::chrono::milliseconds timeout = std::chrono::seconds(10)) const {
    char c = 0;
    return get(&c, 1, timeout);
  }
};

// A u64 from a child to the test.
class ValuePipe : private Pipe {
 public:
  void send(std::uint64_t v) const { put(&v, sizeof v); }
  [[nodiscard]] bool receive(std::uint64_t& v,
                             std::chrono::milliseconds timeout = std::chrono::seconds(10)) const {
    return get(&v, sizeof v, timeout);
  }
};

}  // namespace ferry::test

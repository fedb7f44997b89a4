#pragma once
// A one-way signal between a test and a forked child: a pipe. Made before
// the fork, so both sides hold both ends.

#include <doctest/doctest.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>

namespace ferry::test {

class Signal {
 public:
  Signal() { REQUIRE(::pipe(fds_) == 0); }
  ~Signal() {
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  Signal(const Signal&) = delete;
  Signal& operator=(const Signal&) = delete;

  void raise() const { (void)!::write(fds_[1], "x", 1); }
  // True when raised (once per raise) within `timeout`.
  [[nodiscard]] bool wait(std::chrono::milliseconds timeout = std::chrono::seconds(10)) const {
    pollfd p{fds_[0], POLLIN, 0};
    char c = 0;
    return ::poll(&p, 1, static_cast<int>(timeout.count())) == 1 && ::read(fds_[0], &c, 1) == 1;
  }

 private:
  int fds_[2]{};
};

}  // namespace ferry::test

#pragma once
#include <cstdint>

#include <ferry/ferry.hpp>

// Matches the Command type declared in control.yaml field for field (the
// bool is padded to 40 bytes, as the YAML layout computes too).
struct Command {
  std::uint64_t seq;
  std::uint64_t stamp_ns;
  double speed;
  double steer;
  bool stop;  // the last command: the follower stops and exits
};
FERRY_TYPE(Command);
static_assert(sizeof(Command) == 40);

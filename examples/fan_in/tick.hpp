#pragma once
#include <cstdint>

#include <ferry/ferry.hpp>

// Matches the Tick type declared in fan_in.yaml field for field.
struct Tick {
  std::uint64_t publisher;  // the id given to fan_in_publisher
  std::uint64_t seq;        // 0, 1, 2... per publisher
  double value;
};
FERRY_TYPE(Tick);

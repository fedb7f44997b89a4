// Compiled, never run: test_hot_path_inlined reads this object's symbols to
// check that publish() and take() reach the ring with no call in between
// (every FERRY_HOT function inlined, see ferry/detail/lane.hpp for why).
#include <cstdint>

#include "ferry/ferry.hpp"

namespace probe {
struct Pose {
  std::uint64_t stamp_ns;
  double x, y;
  char frame[16];
};
}  // namespace probe
FERRY_TYPE_NAMED(probe::Pose, "Pose");

std::uint32_t probe_publish(ferry::Publisher<probe::Pose>& pub, const probe::Pose& pose) {
  return pub.publish(pose).delivered;
}

bool probe_take(ferry::Subscriber<probe::Pose>& sub, probe::Pose& out) {
  auto sample = sub.take();
  if (!sample) return false;
  out = **sample;
  return true;  // the Sample's release runs here
}

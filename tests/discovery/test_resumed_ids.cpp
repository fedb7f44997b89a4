// The id a restarted ferryd continues from (resumed_ids.hpp): the stored
// one when it can be right, else past every id the domain's objects name.
#include <doctest/doctest.h>

#include <limits>
#include <string>
#include <vector>

#include "resumed_ids.hpp"

using namespace ferry::discovery;

TEST_CASE("the highest id is read from queue and doorbell names of the domain only") {
  const std::vector<std::string> names = {
      "ferry.d.pool",      "ferry.d.registry", "ferry.d.lock",         "ferry.d.ring.7.12",
      "ferry.d.ring.15.3", "ferry.d.bell.9",   "ferry.d.bell.11.x7k2", "ferry.dd.bell.9999",
      "ferry.d.ring.x.y",  "ferry.d.bell.",    "ferry.d.ring.4",
  };
  CHECK(highest_id_in_names("d", names) == 15);
  CHECK(highest_id_in_names("d", {}) == 0);
  CHECK(highest_id_in_names("d", {"ferry.d.bell.99999999999999999999999"}) == 0);  // > 64 bits
}

TEST_CASE("a stored next id is kept when it can be right, else recovered past the named ids") {
  CHECK(resume_ids(40, 15).next == 40);
  CHECK(resume_ids(40, 15).recovered_because.empty());
  CHECK(resume_ids(16, 15).next == 16);
  CHECK(resume_ids(1, 0).next == 1);
  for (const std::uint64_t bad : {std::uint64_t{0}, std::uint64_t{5}, std::uint64_t{15},
                                  kMaxPlausibleId + 1, std::numeric_limits<std::uint64_t>::max()}) {
    CAPTURE(bad);
    const ResumedIds ids = resume_ids(bad, 15);
    CHECK(ids.next == 16);
    CHECK_FALSE(ids.recovered_because.empty());
  }
  CHECK(resume_ids(0, 0).next == 1);
  // An object naming an impossible id does not use the ids up.
  CHECK(resume_ids(0, std::numeric_limits<std::uint64_t>::max()).next == 1);
}

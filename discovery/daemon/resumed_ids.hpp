#pragma once
// The port and node ids a restarted ferryd continues from. The previous
// ferryd left its next id in the domain's shared registry; that is shared
// memory, which a broken or hostile local process may have overwritten. An
// id names queues ("ring.<publisher>.<subscriber>") and doorbells
// ("bell.<subscriber>") that live nodes still use, so an id given again
// would replace a live subscriber's doorbell (its new publishers ring
// another one) or queue, and ids near 2^64 would wrap to 0. So the stored
// value is checked against the objects of the domain, and recovered from
// them when it cannot be right.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::discovery {

// More ids than any domain gives: a thousand new ports a second for 8,900
// years. A stored next id above it was not written by a ferryd.
inline constexpr std::uint64_t kMaxPlausibleId = std::uint64_t{1} << 48U;

// The highest id the domain's objects name (their shm names, as
// transport::list_domain_objects gives them), 0 when none does.
[[nodiscard]] std::uint64_t highest_id_in_names(std::string_view domain,
                                                const std::vector<std::string>& names);

struct ResumedIds {
  std::uint64_t next = 1;  // the id to continue from
  // Empty when `stored` was used; else why it could not be (for the log).
  std::string recovered_because;
};

// `stored` when it is possible: at least 1, at most kMaxPlausibleId and
// past `highest_named`; else the id after `highest_named`.
[[nodiscard]] ResumedIds resume_ids(std::uint64_t stored, std::uint64_t highest_named);

}  // namespace ferry::discovery

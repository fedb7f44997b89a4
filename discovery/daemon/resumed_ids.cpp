#include "resumed_ids.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "ferry/transport/names.hpp"

namespace ferry::discovery {

namespace {

// The number `text` starts with (its leading digits); nullopt without one
// or past 64 bits.
bool leading_number(std::string_view text, std::uint64_t& out) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc{} && end != text.data();
}

}  // namespace

std::uint64_t highest_id_in_names(std::string_view domain, const std::vector<std::string>& names) {
  const std::string prefix = transport::shm_name(domain, "");
  std::uint64_t highest = 0;
  for (const std::string& name : names) {
    if (!name.starts_with(prefix)) continue;
    std::string_view rest = std::string_view(name).substr(prefix.size());
    std::uint64_t id = 0;
    if (rest.starts_with("bell.")) {
      if (leading_number(rest.substr(5), id)) highest = std::max(highest, id);
    } else if (rest.starts_with("ring.")) {
      rest.remove_prefix(5);
      if (leading_number(rest, id)) highest = std::max(highest, id);  // the publisher
      if (const auto dot = rest.find('.');
          dot != std::string_view::npos && leading_number(rest.substr(dot + 1), id)) {
        highest = std::max(highest, id);  // the subscriber
      }
    }
  }
  return highest;
}

ResumedIds resume_ids(std::uint64_t stored, std::uint64_t highest_named) {
  // An object naming an id past the plausible range was not made by a
  // ferryd either: it does not raise the floor (ids would run out).
  const std::uint64_t floor = highest_named < kMaxPlausibleId ? highest_named + 1 : 1;
  if (stored == 0) return {floor, "0 is no id"};
  if (stored > kMaxPlausibleId) {
    return {floor, fmt::format("more than {} ids were never given", kMaxPlausibleId)};
  }
  if (stored < floor) {
    return {floor,
            fmt::format("the domain's queues and doorbells name ids up to {}", highest_named)};
  }
  return {stored, {}};
}

}  // namespace ferry::discovery

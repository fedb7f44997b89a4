#include "checked.hpp"

#include <spdlog/spdlog.h>

#include <cstdlib>

namespace ferry::detail {

void invariant_broken(std::string_view what) noexcept {
  spdlog::critical("ferry: internal invariant broken: {}", what);
  spdlog::shutdown();  // flushes every sink before the abort
  std::abort();
}

}  // namespace ferry::detail

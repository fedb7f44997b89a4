#include "lock_order.hpp"

#if FERRY_CHECKED

#include <fmt/format.h>

#include <bit>
#include <cstdint>

namespace ferry::detail {

namespace {

// Bit r: this thread holds the mutex of rank r.
thread_local std::uint32_t t_held_ranks = 0;

const char* rank_name(unsigned rank) noexcept {
  switch (rank) {
    case 1:
      return "NodeRuntime::rejoin_mutex_";
    case 2:
      return "NodeRuntime::send_mutex_";
    case 3:
      return "NodeRuntime::mutex_";
    case 4:
      return "WaitSetCore::mutex";
    case 5:
      return "PortState::mutex_";
    case 6:
      return "DomainPoolView::peers_mutex_";
    default:
      return "an unranked mutex";
  }
}

}  // namespace

void lock_order_acquire(LockRank rank) noexcept {
  const auto r = static_cast<unsigned>(rank);
  if (const std::uint32_t above = t_held_ranks >> r; above != 0) [[unlikely]] {
    const unsigned held = r + static_cast<unsigned>(std::bit_width(above)) - 1;
    invariant_broken(
        fmt::format("lock order (lock_order.hpp): taking {} (rank {}) while "
                    "holding {} (rank {})",
                    rank_name(r), r, rank_name(held), held));
  }
  t_held_ranks |= std::uint32_t{1} << r;
}

void lock_order_release(LockRank rank) noexcept {
  t_held_ranks &= ~(std::uint32_t{1} << static_cast<unsigned>(rank));
}

}  // namespace ferry::detail

#endif

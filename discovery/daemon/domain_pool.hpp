#pragma once
// The domain's loaned-memory pool as ferryd owns it: sized from the YAML
// (`pool:` or planned from the topics), checked against the free space of
// /dev/shm, created at start, and told to reclaim what a dead node held.

#include <cstdint>
#include <optional>
#include <string>

#include "ferry/config/config.hpp"
#include "ferry/transport/pool.hpp"
#include "ferry/transport/segment.hpp"

namespace ferry::discovery {

// Overflow holder nodes for a pool of `chunks` chunks serving `config`'s
// topics (docs/design/pool.md, "Sizing the node area"): enough for every
// chunk to reach the largest fan-out of any topic (its max_subscribers, a
// few observers and the publisher), or, if that is smaller, for every
// reference the declared topics can hold at once (loans, history, queue
// slots, held samples) to have a holder of its own and every chunk to reach
// the fan-out of undeclared topics (`defaults:`, unless strict); at least 64.
[[nodiscard]] std::uint32_t holder_nodes_for(const config::Config& config, std::uint64_t chunks);

class DomainPool {
 public:
  // Throws std::runtime_error with one sentence (which topic needs how much
  // when /dev/shm is too small).
  DomainPool(const std::string& domain, const config::Config& config, mode_t mode,
             gid_t group = static_cast<gid_t>(-1));
  // Adopts the pool a previous ferryd of the domain left (its live nodes
  // still use it). Throws std::runtime_error when there is none usable.
  struct Adopt {
    transport::ObjectOwner owner;  // whose object it must be
  };
  DomainPool(const std::string& domain, const Adopt& adopt);

  [[nodiscard]] transport::Pool& pool() noexcept { return *pool_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] std::uint64_t bytes() const noexcept { return segment_->total_size(); }

 private:
  std::string name_;
  std::optional<transport::Segment> segment_;
  std::optional<transport::Pool> pool_;
};

}  // namespace ferry::discovery

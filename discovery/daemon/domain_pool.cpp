#include "domain_pool.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <stdexcept>

#include "ferry/config/limits.hpp"
#include "ferry/config/pool_plan.hpp"
#include "ferry/discovery/objects.hpp"
#include "ferry/transport/pool_layout.hpp"

static_assert(ferry::config::kMaxPoolClasses == ferry::transport::kMaxPoolClasses,
              "the configuration's limit is the pool layout's");

namespace ferry::discovery {

namespace {

constexpr std::uint64_t kDefaultChunkSize = 4096;
constexpr std::uint64_t kDefaultChunkCount = 256;
// Observers (`ferry topic echo`, `record`, `foxglove`) a chunk's fan-out
// counts beside its topic's max_subscribers.
constexpr std::uint64_t kObserverAllowance = 4;

using config::add_sat;
using config::mul_sat;

transport::PoolGeometry geometry_of(const config::PoolPlan& plan) {
  transport::PoolGeometry geometry;
  for (const auto& c : plan.classes) {
    if (c.count > transport::kMaxChunksPerClass) {
      throw std::runtime_error(fmt::format(
          "pool class of {}-byte chunks has {} chunks, more than the {} a class can have; lower "
          "its count or the topics' capacity, max_subscribers or max_publishers",
          c.chunk_size, c.count, transport::kMaxChunksPerClass));
    }
    geometry.classes.push_back({c.chunk_size, static_cast<std::uint32_t>(c.count)});
  }
  return geometry;
}

}  // namespace

std::uint32_t holder_nodes_for(const config::Config& config, std::uint64_t chunks) {
  std::uint64_t readers = config.defaults.max_subscribers;  // undeclared topics get these
  std::uint64_t refs = 0;
  for (const config::Topic& t : config.topics) {
    const config::TopicSettings& s = t.settings;
    readers = std::max<std::uint64_t>(readers, s.max_subscribers);
    const std::uint64_t per_publisher =
        add_sat(add_sat(s.max_loans, s.history), mul_sat(s.max_subscribers, s.capacity));
    refs = add_sat(refs, add_sat(mul_sat(s.max_publishers, per_publisher),
                                 mul_sat(s.max_subscribers, s.max_held)));
  }
  // Every chunk at the largest fan-out (a publisher, its readers, observers).
  const std::uint64_t by_fanout =
      transport::holder_nodes_for(chunks, add_sat(readers, kObserverAllowance + 1));
  // Every reference the declared topics can hold at once in a holder of its
  // own: a chain's nodes are full but for its last, so 13 holders a node,
  // plus one part-filled node per chunk with more than 13 holders (at most
  // refs / 14 such chunks).
  const std::uint64_t by_refs = add_sat(refs / 13, refs / 14) + 1;
  // Undeclared topics (not strict): every chunk at their fan-out.
  const std::uint64_t undeclared =
      config.strict ? 0
                    : transport::holder_nodes_for(
                          chunks, add_sat(config.defaults.max_subscribers, kObserverAllowance + 1));
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(
      std::min(by_fanout, std::max(by_refs, undeclared)), 64, transport::kMaxHolderNodes));
}

DomainPool::DomainPool(const std::string& domain, const config::Config& config, mode_t mode,
                       gid_t group)
    : name_(pool_object_name(domain)) {
  config::PoolPlan plan = config::plan_pool(config);
  if (plan.classes.empty()) {
    // No topic declared and no `pool:`: a modest class for undeclared topics' loans.
    plan.classes.push_back({kDefaultChunkSize, kDefaultChunkCount});
    plan.total_bytes = kDefaultChunkSize * kDefaultChunkCount;
  }
  if (auto free = config::free_shm_bytes(); free) {
    if (auto fits = config::check_pool_fits(plan, *free); !fits) {
      // Where to look: the topic that needs the most, else the file.
      const config::Topic* t = plan.from_config || fits.error().topic.empty()
                                   ? nullptr
                                   : config.find_topic(fits.error().topic);
      const std::string at =
          t != nullptr && t->pos.line != 0
              ? fmt::format("{}:{}:{}", config.source, t->pos.line, t->pos.column)
              : config.source;
      throw std::runtime_error(at.empty() ? fits.error().message
                                          : fmt::format("{}: {}", at, fits.error().message));
    }
  }
  transport::PoolGeometry geometry = geometry_of(plan);
  std::uint64_t chunks = 0;
  for (const auto& c : geometry.classes) chunks += c.count;
  geometry.holder_nodes = holder_nodes_for(config, chunks);
  const std::size_t bytes = transport::pool_bytes(geometry);
  if (bytes == 0) throw std::runtime_error("the pool's size classes are invalid");
  auto segment = transport::Segment::create(name_, kPoolKind, transport::kPoolLayoutVersion, bytes,
                                            {.remove_stale = true, .mode = mode, .group = group});
  if (!segment) {
    throw std::runtime_error(fmt::format("cannot create the pool '{}' ({} bytes): {}", name_, bytes,
                                         transport::to_string(segment.error())));
  }
  if (auto formatted =
          transport::format_pool(segment->payload(), segment->payload_size(), geometry);
      !formatted) {
    transport::Segment::remove(name_);
    throw std::runtime_error(
        fmt::format("cannot format the pool: {}", transport::to_string(formatted.error())));
  }
  segment->seal();
  auto attached = transport::Pool::attach(segment->payload(), segment->payload_size());
  if (!attached) {
    throw std::runtime_error(
        fmt::format("cannot attach the pool: {}", transport::to_string(attached.error())));
  }
  segment_.emplace(std::move(*segment));
  pool_.emplace(std::move(*attached));
  for (const auto& c : plan.classes) {
    spdlog::info("pool class: {} chunks of {} bytes", c.count, c.chunk_size);
  }
  spdlog::info(
      "pool: {} overflow holder nodes (13 more readers each, for chunks held by more "
      "than 13 nodes at once)",
      geometry.holder_nodes);
}

DomainPool::DomainPool(const std::string& domain, const Adopt& adopt)
    : name_(pool_object_name(domain)) {
  auto segment = transport::Segment::open(name_, kPoolKind, transport::kPoolLayoutVersion,
                                          std::chrono::milliseconds(0),
                                          transport::SegmentAccess::ReadWrite, adopt.owner);
  if (!segment) {
    throw std::runtime_error(
        fmt::format("cannot open the pool '{}': {}", name_, transport::to_string(segment.error())));
  }
  // attach() checks the whole geometry: the previous daemon's memory is
  // untrusted input like any other.
  auto attached = transport::Pool::attach(segment->payload(), segment->payload_size());
  if (!attached) {
    throw std::runtime_error(fmt::format("the pool '{}' is not usable: {}", name_,
                                         transport::to_string(attached.error())));
  }
  segment_.emplace(std::move(*segment));
  pool_.emplace(std::move(*attached));
}

}  // namespace ferry::discovery

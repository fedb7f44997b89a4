#include "domain_pool.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

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
      throw std::runtime_error(fits.error().message);
    }
  }
  const transport::PoolGeometry geometry = geometry_of(plan);
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

#include "domain_pool_view.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "ferry/discovery/objects.hpp"

namespace ferry::detail {

std::shared_ptr<DomainPoolView> DomainPoolView::open(const std::string& domain,
                                                     transport::OwnerId owner) {
  const std::string name = discovery::pool_object_name(domain);
  auto segment = transport::Segment::open(name, discovery::kPoolKind, transport::kPoolLayoutVersion,
                                          discovery::kOpenTimeout);
  if (!segment) {
    throw std::runtime_error(fmt::format("cannot open the pool '{}' of domain '{}': {}", name,
                                         domain, transport::to_string(segment.error())));
  }
  auto pool = transport::Pool::attach(segment->payload(), segment->payload_size());
  if (!pool) {
    throw std::runtime_error(fmt::format("the pool '{}' is not usable: {}", name,
                                         transport::to_string(pool.error())));
  }
  if (owner == transport::kNoOwner) {
    throw std::runtime_error("ferryd gave this node no pool owner id");
  }
  return std::shared_ptr<DomainPoolView>(
      new DomainPoolView{std::move(*segment), std::move(*pool), owner});
}

}  // namespace ferry::detail

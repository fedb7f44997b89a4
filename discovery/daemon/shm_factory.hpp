#pragma once
// The shared-memory objects ferryd makes for its registry: one ring segment
// per (publisher, subscriber) queue and one doorbell segment per subscriber.

#include <sys/types.h>

#include "registry.hpp"

namespace ferry::discovery {

class ShmObjects final : public ShmFactory {
 public:
  ShmObjects(mode_t mode, gid_t group) : mode_(mode), group_(group) {}
  std::expected<void, std::string> create_ring(const std::string& name, std::uint32_t capacity,
                                               std::uint32_t slot_size, Policy policy) override;
  std::expected<void, std::string> create_doorbell(const std::string& name) override;
  std::expected<void, std::string> adopt_doorbell(const std::string& name) override;
  void remove(const std::string& name) override;

 private:
  mode_t mode_;
  gid_t group_;  // -1: ferryd's own
};

}  // namespace ferry::discovery

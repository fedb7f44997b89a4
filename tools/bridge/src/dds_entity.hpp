#pragma once
// An owned Cyclone DDS entity handle (participant, topic, reader, writer,
// waitset); deleting the participant deletes what it holds.

#include <dds/dds.h>

#include <string>
#include <utility>

#include "ferry/bridge/bridge.hpp"

namespace ferry::bridge {

class DdsEntity {
 public:
  DdsEntity() = default;
  // Takes a handle from a dds_create_*; a negative one is a BridgeError
  // naming `what` and Cyclone's reason.
  DdsEntity(dds_entity_t handle, const std::string& what) : handle_(handle) {
    if (handle < 0)
      throw BridgeError("cannot create the DDS " + what + ": " + dds_strretcode(handle));
  }
  DdsEntity(DdsEntity&& other) noexcept : handle_(std::exchange(other.handle_, 0)) {}
  DdsEntity& operator=(DdsEntity&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, 0);
    }
    return *this;
  }
  DdsEntity(const DdsEntity&) = delete;
  DdsEntity& operator=(const DdsEntity&) = delete;
  ~DdsEntity() { reset(); }

  [[nodiscard]] dds_entity_t get() const noexcept { return handle_; }

 private:
  void reset() noexcept {
    if (handle_ > 0) (void)dds_delete(std::exchange(handle_, 0));
  }
  dds_entity_t handle_ = 0;
};

}  // namespace ferry::bridge

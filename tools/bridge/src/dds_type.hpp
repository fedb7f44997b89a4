#pragma once
// A Cyclone DDS topic descriptor built at run time from a ferry type, so that
// the bridge serves any declared type without idlc: the ops idlc makes of
// the matching IDL (XCDR1, final, no key). A fixed-size type's ops read the
// ferry sample in place (the fields' offsets are the schema's); a type with
// string<=N or T[<=N] is ROS 2's (unbounded string and sequence<T>, at the
// offsets of idlc's C struct), and its samples cross as CDR (cdr_write.hpp).

#include <dds/dds.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ferry/config/schema.hpp"

namespace ferry::bridge {

class DdsType {
 public:
  DdsType() = default;  // none yet: assign one before use
  // A declared type (struct or opaque) of `schema`.
  DdsType(const config::Schema& schema, std::size_t type);
  // A bytes topic: `struct { sequence<octet> data; }`, in memory one
  // dds_sequence_t (the layout of idlc's dds_sequence_octet).
  static DdsType bytes();
  // A service's request or response as rmw_cyclonedds carries it
  // (docs/bridge.md, "Services"): its request header (uint64 client guid,
  // int64 sequence number) and then the declared type's fields; in memory
  // the header's 16 bytes, then the ferry sample. Named `name`.
  static DdsType with_request_header(const config::Schema& schema, std::size_t type,
                                     std::string name);

  [[nodiscard]] const dds_topic_descriptor_t* descriptor() const noexcept {
    return &*s_->descriptor;
  }
  [[nodiscard]] const std::string& name() const noexcept { return s_->name; }
  [[nodiscard]] const std::vector<std::uint32_t>& ops() const noexcept { return s_->ops; }
  // Whether it has a bounded string or sequence: its samples are not
  // Cyclone's C layout and cross as CDR only.
  [[nodiscard]] bool variable() const noexcept { return variable_; }

 private:
  void init(std::string name, std::vector<std::uint32_t> ops, std::uint32_t instructions,
            std::uint32_t size, std::uint32_t align, bool fixed_size);

  // On the heap, so that moving a DdsType keeps the descriptor's pointers.
  struct Storage {
    std::string name;  // pkg::msg::dds_::Name_
    std::vector<std::uint32_t> ops;
    std::optional<dds_topic_descriptor_t> descriptor;  // points into name and ops
  };
  std::unique_ptr<Storage> s_;
  bool variable_ = false;
};

// "pkg::msg::dds_::Name_" for a ferry type name (docs/record-replay.md schema name).
[[nodiscard]] std::string dds_type_name(const std::string& ferry_type);

}  // namespace ferry::bridge

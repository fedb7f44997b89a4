#pragma once
// Writes a ferry sample of a type with string<=N or T[<=N] to DDS as CDR
// made by ferry's own codec (config/cdr.hpp), the wire form ROS 2 uses:
// length-prefixed strings, sequences with only their used length. The CDR
// is lent to Cyclone as a serialized sample of a sertype of our own (never
// a topic's); dds_writecdr turns it into one of the writer's topic type
// (Cyclone's from_ser_iov, which checks it against the topic's ops), the
// same way Cyclone converts between topics of different domains.

#include <dds/dds.h>

#include <cstddef>
#include <memory>
#include <span>

#include "ferry/config/schema.hpp"

namespace ferry::bridge {

class CdrWriter {
 public:
  // For samples of schema.type(type); `type_name` names the DDS type.
  CdrWriter(const config::Schema& schema, std::size_t type, const char* type_name);
  ~CdrWriter();
  CdrWriter(const CdrWriter&) = delete;
  CdrWriter& operator=(const CdrWriter&) = delete;

  // Encodes `sample` (exactly the type's size) and writes it with `writer`.
  // Throws config::CdrError when a length in the sample is over its bound
  // (a corrupted sample: ferry's publishers never write one); else what
  // dds_writecdr returns. The buffer grows to the largest sample seen and
  // is reused: no allocation per sample once it has.
  dds_return_t write(dds_entity_t writer, std::span<const std::byte> sample);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ferry::bridge

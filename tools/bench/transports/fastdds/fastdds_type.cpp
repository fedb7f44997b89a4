#include "transports/fastdds/fastdds_type.hpp"

#include <fmt/format.h>

#include <cstring>
#include <new>

namespace ferry::bench {

namespace {

using eprosima::fastrtps::rtps::SerializedPayload_t;
constexpr std::uint32_t kHeader = SerializedPayload_t::representation_header_size;

}  // namespace

FastBytesType::FastBytesType(std::uint64_t size) : size_(static_cast<std::uint32_t>(size)) {
  setName(fmt::format("ferry_bench::Bytes_{}", size).c_str());
  m_typeSize = size_ + kHeader;  // the largest serialized sample, header included
  m_isGetKeyDefined = false;
  // No XTypes type object: there is no IDL, and the sides agree by name.
  auto_fill_type_object(false);
  auto_fill_type_information(false);
}

bool FastBytesType::serialize(void* data, SerializedPayload_t* payload) {
  if (payload->max_size < m_typeSize) return false;
  payload->data[0] = 0;  // CDR_LE, as Fast DDS's own serializer writes it
  payload->data[1] = CDR_LE;
  payload->data[2] = 0;
  payload->data[3] = 0;
  std::memcpy(payload->data + kHeader, data, size_);
  payload->encapsulation = CDR_LE;
  payload->length = m_typeSize;
  return true;
}

bool FastBytesType::deserialize(SerializedPayload_t* payload, void* data) {
  if (payload->length != m_typeSize) return false;
  std::memcpy(data, payload->data + kHeader, size_);
  return true;
}

std::function<std::uint32_t()> FastBytesType::getSerializedSizeProvider(void* /*data*/) {
  return [n = m_typeSize] { return n; };
}

void* FastBytesType::createData() { return ::operator new(size_); }

void FastBytesType::deleteData(void* data) { ::operator delete(data); }

bool FastBytesType::getKey(void* /*data*/, eprosima::fastrtps::rtps::InstanceHandle_t* /*handle*/,
                           bool /*force_md5*/) {
  return false;
}

bool FastBytesType::construct_sample(void* memory) const {
  std::memset(memory, 0, size_);
  return true;
}

}  // namespace ferry::bench

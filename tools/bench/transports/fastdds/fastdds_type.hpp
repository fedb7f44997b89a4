#pragma once
// The Fast DDS comparator's message type, written by hand against Fast DDS's
// TopicDataType (fastddsgen, which would generate it, is not in Debian): a
// fixed-size array of `size` bytes, the first 8 the sequence number. Plain
// and bounded, so Fast DDS may share it (data-sharing) and loan it
// (DataWriter::loan_sample, DataReader::take into a loaned sequence): the
// best case a ROS 2 user gets from Fast DDS between processes. Its name
// carries the size ("ferry_bench::Bytes_64"), so sides of different sizes
// never match.

#include <cstdint>
#include <fastdds/dds/topic/TopicDataType.hpp>

namespace ferry::bench {

class FastBytesType final : public eprosima::fastdds::dds::TopicDataType {
 public:
  explicit FastBytesType(std::uint64_t size);

  // CDR: the 4-byte encapsulation header (little endian), then the bytes.
  bool serialize(void* data, eprosima::fastrtps::rtps::SerializedPayload_t* payload) override;
  // Refuses a payload of another size (never trust the peer).
  bool deserialize(eprosima::fastrtps::rtps::SerializedPayload_t* payload, void* data) override;
  std::function<std::uint32_t()> getSerializedSizeProvider(void* data) override;
  void* createData() override;
  void deleteData(void* data) override;
  bool getKey(void* data, eprosima::fastrtps::rtps::InstanceHandle_t* handle,
              bool force_md5) override;  // no key: false
  [[nodiscard]] bool is_bounded() const override { return true; }
  [[nodiscard]] bool is_plain() const override { return true; }
  bool construct_sample(void* memory) const override;

 private:
  std::uint32_t size_;
};

}  // namespace ferry::bench

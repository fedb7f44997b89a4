// The run-time DDS types of ferry bridge against what idlc generates from the
// hand-written IDL of the same types (ferry_types.idl) and from ROS 2's own
// IDL of sensor_msgs/msg/Image (ros2/): the same marshalling ops, size,
// alignment and type name, so both write the same CDR.
#include <doctest/doctest.h>

#include <vector>

#include "bridge_types.hpp"
#include "dds_type.hpp"
#include "ferry/config/load.hpp"
#include "ferry_types.h"
#include "sensor_msgs/msg/Image_.h"

namespace {

void same_as_idlc(const char* ferry_type, const dds_topic_descriptor_t& idlc,
                  const std::string& yaml = ferry::test::bridge_yaml()) {
  const auto config = ferry::config::load_string(yaml);
  const auto index = config.schema.index_of(ferry_type);
  REQUIRE(index.has_value());
  const ferry::bridge::DdsType type(config.schema, *index);
  const dds_topic_descriptor_t& ours = *type.descriptor();
  CHECK(std::string(ours.m_typename) == idlc.m_typename);
  CHECK(ours.m_size == idlc.m_size);
  CHECK(ours.m_align == idlc.m_align);
  CHECK(ours.m_nops == idlc.m_nops);
  CHECK(ours.m_nkeys == 0);
  // m_nops counts instructions, not words: compare as many words as ours.
  const std::vector<std::uint32_t> expected(idlc.m_ops, idlc.m_ops + type.ops().size());
  CHECK(type.ops() == expected);
}

}  // namespace

TEST_CASE("a nested type with every field type gets idlc's ops") {
  same_as_idlc("All", ferry_msg_dds__All__desc);
}

TEST_CASE("a flat type and a 1080p frame get idlc's ops") {
  same_as_idlc("Small", ferry_msg_dds__Small__desc);
  same_as_idlc("Frame", ferry_msg_dds__Frame__desc);
}

TEST_CASE(
    "sensor_msgs/msg/Image, with its bounded string and sequence, gets the ops idlc makes of ROS "
    "2's IDL (unbounded string, sequence<uint8>)") {
  same_as_idlc("sensor_msgs/msg/Image", sensor_msgs_msg_dds__Image__desc,
               "include: [sensor_msgs.yaml]\npool: [{ chunk_size: 24MiB, count: 1 }]\n"
               "topics:\n  - { name: camera/image, type: sensor_msgs/msg/Image, capacity: 2 }\n");
}

TEST_CASE("a bytes topic is sequence<octet> data") {
  const auto type = ferry::bridge::DdsType::bytes();
  CHECK(type.name() == "ferry::msg::dds_::Bytes_");
  const std::vector<std::uint32_t> expected(ferry_msg_dds__Bytes__desc.m_ops,
                                            ferry_msg_dds__Bytes__desc.m_ops + type.ops().size());
  CHECK(type.ops() == expected);
  CHECK(type.descriptor()->m_size == ferry_msg_dds__Bytes__desc.m_size);
}

TEST_CASE("type names follow ROS 2: pkg::msg::dds_::Name_") {
  CHECK(ferry::bridge::dds_type_name("Pose") == "ferry::msg::dds_::Pose_");
  CHECK(ferry::bridge::dds_type_name("geometry_msgs/Pose") == "geometry_msgs::msg::dds_::Pose_");
  CHECK(ferry::bridge::dds_type_name("geometry_msgs/msg/Pose") ==
        "geometry_msgs::msg::dds_::Pose_");
}

// The run-time DDS types of ferry bridge against what idlc generates from the
// hand-written IDL of the same types (ferry_types.idl) and from ROS 2's own
// IDL of sensor_msgs/msg/Image (ros2/): the same marshalling ops, size,
// alignment and type name, so both write the same CDR.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "bridge_types.hpp"
#include "dds_ports.hpp"
#include "dds_type.hpp"
#include "ferry/config/load.hpp"
#include "ferry_types.h"
#include "ros_services.h"
#include "sensor_msgs/msg/Image_.h"
#include "service_link.hpp"

namespace {

void same_as_idlc(const ferry::bridge::DdsType& type, const dds_topic_descriptor_t& idlc) {
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

void same_as_idlc(const char* ferry_type, const dds_topic_descriptor_t& idlc,
                  const std::string& yaml = ferry::test::bridge_yaml()) {
  const auto config = ferry::config::load_string(yaml);
  const auto index = config.schema.index_of(ferry_type);
  REQUIRE(index.has_value());
  same_as_idlc(ferry::bridge::DdsType(config.schema, *index), idlc);
}

const char* const kServiceYaml =
    "types:\n"
    "  Point: { ros2: example_interfaces/msg/Point, fields: [{ name: x, type: f64 }, "
    "{ name: y, type: f64 }] }\n"
    "  AddTwoIntsRequest: { ros2: example_interfaces/msg/AddTwoIntsRequest, fields: "
    "[{ name: a, type: i64 }, { name: b, type: i64 }] }\n"
    "  AddTwoIntsResponse: { fields: [{ name: sum, type: i64 }] }\n"
    "  PlanRequest: { ros2: example_interfaces/msg/Plan_Request, fields: [{ name: goal, type: "
    "Point }, { name: via, type: \"Point[2]\" }, { name: mode, type: u8 }] }\n"
    "services:\n"
    "  - { name: calc/add, request: AddTwoIntsRequest, response: AddTwoIntsResponse }\n"
    "  - { name: plan, request: PlanRequest, response: AddTwoIntsResponse }\n";

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

TEST_CASE("a service's request and response are rmw_cyclonedds' header, then the fields") {
  const auto config = ferry::config::load_string(kServiceYaml);
  const auto& add = config.services.at(0);
  const auto names = ferry::bridge::service_names(config, add);
  CHECK(names.request_topic == "rq/calc/addRequest");
  CHECK(names.reply_topic == "rr/calc/addReply");
  CHECK(names.request_type == "example_interfaces::srv::dds_::AddTwoInts_Request_");
  CHECK(names.response_type == "example_interfaces::srv::dds_::AddTwoInts_Response_");
  same_as_idlc(ferry::bridge::DdsType::with_request_header(config.schema, add.request_index,
                                                           names.request_type),
               example_interfaces_srv_dds__AddTwoInts_Request__desc);
  same_as_idlc(ferry::bridge::DdsType::with_request_header(config.schema, add.response_index,
                                                           names.response_type),
               example_interfaces_srv_dds__AddTwoInts_Response__desc);
  // Nested types: only the top level moves behind the header.
  const auto& plan = config.services.at(1);
  const auto plan_names = ferry::bridge::service_names(config, plan);
  CHECK(plan_names.request_type == "example_interfaces::srv::dds_::Plan_Request_");
  same_as_idlc(ferry::bridge::DdsType::with_request_header(config.schema, plan.request_index,
                                                           plan_names.request_type),
               example_interfaces_srv_dds__Plan_Request__desc);
}

TEST_CASE("a DDS domain whose fixed ports lie above 65535 is refused in one sentence") {
  ::unsetenv("CYCLONEDDS_URI");
  CHECK(ferry::bridge::cyclone_max_domain() == 232);  // ports 65400, 65401
  CHECK(ferry::bridge::domain_range_error(0).empty());
  CHECK(ferry::bridge::domain_range_error(232).empty());
  CHECK(ferry::bridge::domain_range_error(233) ==
        "DDS domain 233 is out of range: Cyclone DDS's ports for it (7400 + 250 x 233 = 65650) lie "
        "above 65535; use a domain from 0 to 232, or set Discovery/Ports in CYCLONEDDS_URI");
  CHECK(ferry::bridge::domain_range_error(UINT32_MAX).find("= 1073741831150)") !=
        std::string::npos);
  // The user's own port mapping: Cyclone decides.
  ::setenv("CYCLONEDDS_URI", "<Discovery><Ports><Base>1000</Base></Ports></Discovery>", 1);
  CHECK(ferry::bridge::domain_range_error(233).empty());
  ::unsetenv("CYCLONEDDS_URI");
}

TEST_CASE("a DDS domain's fixed ports are checked against the ephemeral port range") {
  using ferry::bridge::PortRange;
  CHECK(ferry::bridge::cyclone_first_port(0) == 7400);
  CHECK(ferry::bridge::cyclone_first_port(148) == 44400);
  const PortRange linux_default{32768, 60999};
  CHECK_FALSE(ferry::bridge::port_in_range(0, linux_default));
  CHECK_FALSE(ferry::bridge::port_in_range(101, linux_default));  // 32650, 32651
  CHECK(ferry::bridge::port_in_range(102, linux_default) == 32900u);
  CHECK(ferry::bridge::port_in_range(148, linux_default) == 44400u);
  CHECK(ferry::bridge::port_in_range(214, linux_default) == 60900u);
  CHECK_FALSE(ferry::bridge::port_in_range(215, linux_default));  // 61150
  // Only the second port inside: it is the one named.
  CHECK(ferry::bridge::port_in_range(148, PortRange{44401, 50000}) == 44401u);

  // No domain id wraps into a port (250 x 2^32 does not fit 32 bits).
  CHECK(ferry::bridge::cyclone_first_port(UINT32_MAX) == 7400 + 250 * std::uint64_t{UINT32_MAX});
  CHECK_FALSE(ferry::bridge::port_in_range(UINT32_MAX, PortRange{1, 65535}));

  const auto parsed = ferry::bridge::parse_port_range("32768\t60999\n");
  REQUIRE(parsed);
  CHECK(parsed->low == 32768);
  CHECK(parsed->high == 60999);
  for (const char* bad : {"", "32768", "60999 32768", "0 100", "1 65536", "1 2 3", "a b"}) {
    CAPTURE(bad);
    CHECK_FALSE(ferry::bridge::parse_port_range(bad));
  }
}

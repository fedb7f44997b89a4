// tools/foxglove without sockets: the Foxglove protocol's messages both
// ways, the per-client send queue's fairness and bound, and the hand-off
// from the taking thread to the I/O thread (with threads: TSan sees it).
#include <doctest/doctest.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <thread>

#include "events.hpp"
#include "json_text.hpp"
#include "protocol.hpp"
#include "send_queue.hpp"

using namespace ferry::foxglove;
using nlohmann::json;

namespace {

std::vector<std::byte> bytes(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

OutMessage message(ChannelId channel, std::size_t size, std::uint64_t stamp = 0) {
  return OutMessage{channel, stamp, std::make_shared<Payload>(size)};
}

}  // namespace

TEST_CASE("serverInfo declares clientPublish and the cdr encoding") {
  const json j = ferry::test::parse_json(server_info_json("ferry foxglove", "42", "demo"));
  CHECK(j["op"] == "serverInfo");
  CHECK(j["capabilities"] == json::array({"clientPublish"}));
  CHECK(j["supportedEncodings"] == json::array({"cdr"}));
  CHECK(j["metadata"]["ferry_domain"] == "demo");
  CHECK(j["sessionId"] == "42");
}

TEST_CASE("advertise carries cdr, the schema name, ros2msg and the schema text") {
  const std::vector<ChannelDescription> channels = {
      {3, "robot/pose", "geo/msg/Pose", "float64 x\n"}};
  const json j = ferry::test::parse_json(advertise_json(channels));
  CHECK(j["op"] == "advertise");
  REQUIRE(j["channels"].size() == 1);
  CHECK(j["channels"][0] == json{{"id", 3},
                                 {"topic", "robot/pose"},
                                 {"encoding", "cdr"},
                                 {"schemaName", "geo/msg/Pose"},
                                 {"schema", "float64 x\n"},
                                 {"schemaEncoding", "ros2msg"}});
  const std::vector<ChannelId> gone = {3, 4};
  CHECK(ferry::test::parse_json(unadvertise_json(gone)) ==
        json{{"op", "unadvertise"}, {"channelIds", {3, 4}}});
}

TEST_CASE("a status quoting invalid UTF-8 is still valid JSON") {
  const std::string bad = "op '\xff\xfe'";
  const json j = ferry::test::parse_json(status_json(StatusLevel::Warning, bad, "id1"));
  CHECK(j["level"] == 1);
  CHECK(j["id"] == "id1");
}

TEST_CASE("messageData is opcode 1, subscription id and timestamp little-endian") {
  const auto h = message_data_header(0x04030201, 0x0807060504030201ULL);
  CHECK(h[0] == std::byte{1});
  for (int i = 0; i < 4; ++i) CHECK(h[1 + i] == std::byte(i + 1));
  for (int i = 0; i < 8; ++i) CHECK(h[5 + i] == std::byte(i + 1));
}

TEST_CASE("client JSON messages are parsed, anything malformed is Invalid with a reason") {
  const auto sub = parse_client_text(
      R"({"op":"subscribe","subscriptions":[{"id":0,"channelId":3},{"id":7,"channelId":5}]})");
  REQUIRE(std::holds_alternative<Subscribe>(sub));
  CHECK(std::get<Subscribe>(sub).subscriptions.size() == 2);
  CHECK(std::get<Subscribe>(sub).subscriptions[1].channel == 5);
  const auto unsub = parse_client_text(R"({"op":"unsubscribe","subscriptionIds":[0,7]})");
  REQUIRE(std::holds_alternative<Unsubscribe>(unsub));
  CHECK(std::get<Unsubscribe>(unsub).ids == std::vector<SubscriptionId>{0, 7});
  const auto adv = parse_client_text(
      R"({"op":"advertise","channels":[{"id":1,"topic":"a","encoding":"cdr","schemaName":"p/msg/A"}]})");
  REQUIRE(std::holds_alternative<ClientAdvertise>(adv));
  CHECK(std::get<ClientAdvertise>(adv).channels[0].schema_name == "p/msg/A");
  CHECK(std::holds_alternative<ClientUnadvertise>(
      parse_client_text(R"({"op":"unadvertise","channelIds":[1]})")));
  CHECK(std::holds_alternative<Unsupported>(parse_client_text(R"({"op":"getParameters"})")));

  for (const char* bad :
       {"", "{", "[1]", "42", R"({"op":5})", R"({"no":"op"})", R"({"op":"launch"})",
        R"({"op":"subscribe"})", R"({"op":"subscribe","subscriptions":[{"id":1}]})",
        R"({"op":"subscribe","subscriptions":[{"id":-1,"channelId":1}]})",
        R"({"op":"subscribe","subscriptions":[{"id":1.5,"channelId":1}]})",
        R"({"op":"subscribe","subscriptions":[{"id":4294967296,"channelId":1}]})",
        R"({"op":"subscribe","subscriptions":[7]})",
        R"({"op":"unsubscribe","subscriptionIds":["x"]})",
        R"({"op":"advertise","channels":[{"id":1,"topic":2}]})"}) {
    CAPTURE(bad);
    const auto parsed = parse_client_text(bad);
    REQUIRE(std::holds_alternative<Invalid>(parsed));
    CHECK(!std::get<Invalid>(parsed).why.empty());
  }
}

TEST_CASE("client binary frames: message data by channel, everything else refused") {
  const auto frame = bytes({1, 9, 0, 0, 0, 0xAA, 0xBB});
  const auto m = parse_client_binary(frame);
  REQUIRE(std::holds_alternative<ClientMessageData>(m));
  CHECK(std::get<ClientMessageData>(m).channel == 9);
  CHECK(std::get<ClientMessageData>(m).payload.size() == 2);
  CHECK(std::holds_alternative<ServiceCallRequest>(parse_client_binary(bytes({2, 0, 0}))));
  for (const auto& bad : {bytes({}), bytes({1, 0, 0, 0}), bytes({3}), bytes({0xFF, 1, 2, 3, 4})})
    CHECK(std::holds_alternative<Invalid>(parse_client_binary(bad)));
}

TEST_CASE("the send queue serves channels in turn") {
  SendQueue q(1 << 20);
  for (int i = 0; i < 3; ++i) {
    CHECK(q.push(message(1, 100, i)) == 0);
    CHECK(q.push(message(2, 100, i)) == 0);
  }
  std::vector<std::pair<ChannelId, std::uint64_t>> order;
  while (auto m = q.pop()) order.emplace_back(m->channel, m->timestamp_ns);
  CHECK(order == std::vector<std::pair<ChannelId, std::uint64_t>>{
                     {1, 0}, {2, 0}, {1, 1}, {2, 1}, {1, 2}, {2, 2}});
  CHECK(q.empty());
  CHECK(q.bytes() == 0);
}

TEST_CASE("past its budget the queue drops the oldest of the busiest channel, never a pose") {
  constexpr std::size_t kFrame = 3'110'416;
  SendQueue q(std::size_t{16} << 20);  // five frames
  std::uint64_t dropped = 0;
  for (std::uint64_t i = 0; i < 60; ++i) {
    dropped += q.push(message(7, kFrame, i));                                  // 1080p at 30 Hz
    for (int k = 0; k < 3; ++k) dropped += q.push(message(2, 68, i * 3 + k));  // poses
  }
  CHECK(q.bytes() <= q.budget());
  CHECK(dropped == 55);
  CHECK(q.total_drops().at(7) == 55);
  CHECK(!q.total_drops().contains(2));
  const auto recent = q.take_recent_drops();
  CHECK(recent.at(7) == 55);
  CHECK(q.take_recent_drops().empty());
  std::uint64_t poses = 0;
  std::uint64_t first_frame = UINT64_MAX;
  while (auto m = q.pop()) {
    if (m->channel == 2) ++poses;
    if (m->channel == 7) first_frame = std::min(first_frame, m->timestamp_ns);
  }
  CHECK(poses == 180);
  CHECK(first_frame == 55);  // the newest five frames are left
}

TEST_CASE("a message larger than the whole budget still goes out, alone") {
  SendQueue q(1000);
  CHECK(q.push(message(1, 10)) == 0);
  CHECK(q.push(message(2, 5000)) == 1);  // the small one goes, the big one stays
  CHECK(q.messages() == 1);
  CHECK(q.pop()->channel == 2);
  CHECK(q.push(message(2, 5000)) == 0);
  CHECK(q.push(message(2, 5000)) == 1);  // the older big one goes
  CHECK(q.messages() == 1);
}

TEST_CASE("removing a channel forgets its messages without counting drops") {
  SendQueue q(1 << 20);
  (void)q.push(message(1, 100));
  (void)q.push(message(2, 100));
  q.remove_channel(1);
  CHECK(q.messages() == 1);
  CHECK(q.bytes() == 100 + SendQueue::kEntryOverhead);
  CHECK(q.total_drops().empty());
  CHECK(q.pop()->channel == 2);
}

TEST_CASE("the hand-off keeps order, wakes once per drain and bounds the taker") {
  EventHandoff handoff(1000);
  std::atomic<int> wakes{0};
  handoff.set_wake([&] { wakes.fetch_add(1); });
  constexpr int kEvents = 20000;
  std::thread taker([&] {
    for (int i = 0; i < kEvents; ++i) {
      while (handoff.full()) handoff.wait_for_room(std::chrono::milliseconds(5));
      std::vector<PumpEvent> batch;
      batch.emplace_back(message(1, 100, static_cast<std::uint64_t>(i)));
      handoff.push(batch, 100);
    }
  });
  int seen = 0;
  bool in_order = true;
  while (seen < kEvents) {
    for (auto& e : handoff.take()) {
      const auto& m = std::get<OutMessage>(e);
      in_order = in_order && m.timestamp_ns == static_cast<std::uint64_t>(seen);
      ++seen;
    }
    std::this_thread::yield();
  }
  taker.join();
  CHECK(in_order);
  CHECK(wakes.load() >= 1);
  CHECK(wakes.load() <= kEvents);
}

// ferry foxglove end to end: a real ferryd, publishers and subscribers in
// forked children, `ferry foxglove` as a program, and the Foxglove client
// the app uses (@foxglove/ws-protocol on Node.js, tests/tools/foxglove_client)
// decoding with the schemas the server advertises. Every process's exit
// status is checked. The stalled client is test_foxglove_stall.cpp.
#include "foxglove_test_util.hpp"
#include "json_text.hpp"

using namespace std::chrono_literals;
using namespace fox_test;

TEST_CASE_FIXTURE(Served,
                  "every topic is advertised with its ros2msg schema and streams in order") {
  Foxglove fox(domain);
  Client watcher(domain, "watch",
                 {{"url", fox.url},
                  {"subscribe", {"robot/pose", "logs/text"}},
                  {"done", {{"robot/pose", 299}}},
                  {"done_count", {{"logs/text", 3}}},
                  {"timeout_ms", 15000}});
  REQUIRE(watcher.subscribed());
  Child logs([] {
    ferry::Node node{"logger"};
    auto pub = node.publisher<ferry::Bytes>("logs/text");
    if (!wait_for_observer(pub)) return 3;
    for (int i = 0; i < 3; ++i) {
      const std::string line = "line " + std::to_string(i);
      if (pub.publish(std::as_bytes(std::span(line))).error) return 4;
    }
    return 0;
  });
  Child poses([] { return publish_poses(300, 1ms); });
  CHECK(logs.wait() == 0);
  CHECK(poses.wait() == 0);
  const json r = watcher.result();
  CHECK(r["why"] == "done");

  const auto config = ferry::config::load_string(kYaml);
  CHECK(r["server_info"]["capabilities"] == json::array({"clientPublish"}));
  CHECK(r["server_info"]["supportedEncodings"] == json::array({"cdr"}));
  CHECK(r["server_info"]["metadata"]["ferry_domain"] == domain.name());
  for (const auto& [topic, type] :
       {std::pair{"robot/pose", "geo/Pose"}, std::pair{"robot/cmd", "geo/Pose"},
        std::pair{"camera/frames", "cam/Frame"}}) {
    CAPTURE(topic);
    const json* c = channel_of(r, topic);
    REQUIRE(c != nullptr);
    CHECK((*c)["encoding"] == "cdr");
    CHECK((*c)["schemaEncoding"] == "ros2msg");
    CHECK((*c)["schemaName"] == ferry::config::ros2_type_name(type));
    // The text MCAP files carry (ferry record).
    CHECK((*c)["schema"] ==
          ferry::config::ros2msg_definition(config.schema, *config.schema.index_of(type)));
  }
  const json* text = channel_of(r, "logs/text");
  REQUIRE(text != nullptr);
  CHECK((*text)["schemaName"] == "ferry/msg/Bytes");
  CHECK((*text)["schema"] == "uint8[] data\n");

  const json& pose = r["topics"]["robot/pose"];
  CHECK(pose["count"] == 300);
  CHECK(pose["gaps"] == 0);
  CHECK(pose["out_of_order"] == 0);
  CHECK(pose["decode_errors"] == 0);
  CHECK(pose["ts_not_after_stamp"] == 0);  // the timestamp is publish_time_ns
  CHECK(pose["first"]["seq"] == "0");
  CHECK(pose["first"]["x"] == 0.0);
  CHECK(pose["first"]["z"] == 0.25);
  CHECK(pose["first"]["ok"] == true);
  CHECK(pose["first"]["frame"][0] == 'm');
  const json& logs_seen = r["topics"]["logs/text"];
  CHECK(logs_seen["count"] == 3);
  CHECK(logs_seen["first"]["data"] == json::array({'l', 'i', 'n', 'e', ' ', '0'}));
  CHECK(r["errors"].empty());
  CHECK(r["statuses"].empty());
  // The client left: its subscriptions ended, and with the last one the
  // server's observer on each topic.
  CHECK(eventually(
      [&] {
        return ferry::test::ferry_json(domain, {"topic", "info", "robot/pose"})["observers"]
            .empty();
      },
      10s, 20ms));

  // A topic that appears is advertised, and unadvertised when its program leaves.
  {
    Client appear(domain, "watch",
                  {{"url", fox.url}, {"appear", "extra/blob"}, {"timeout_ms", 15000}});
    REQUIRE(appear.subscribed());
    Child blob([] {
      ferry::Node node{"blob-pub"};
      auto pub = node.publisher<Blob>("extra/blob");
      std::this_thread::sleep_for(1500ms);  // three polls of the topic list
      return 0;
    });
    CHECK(blob.wait() == 0);
    const json a = appear.result();
    CHECK(a["why"] == "done");
    CHECK(std::count(a["advertised"].begin(), a["advertised"].end(), "extra/blob") == 1);
    CHECK(std::count(a["unadvertised"].begin(), a["unadvertised"].end(), "extra/blob") == 1);
  }
  CHECK(fox.stop() == 0);
}

TEST_CASE_FIXTURE(Served,
                  "two clients get 1 kHz poses and 30 Hz 1080p frames, each message or a status "
                  "naming what was dropped") {
  // 40 frames of send buffer: a client that keeps up on average but is
  // descheduled for a while (ctest runs other tests beside) loses nothing.
  Foxglove fox(domain, {"--send-buffer", "128"});
  const json options = {{"url", fox.url},
                        {"subscribe", {"robot/pose", "camera/frames"}},
                        {"done", {{"robot/pose", 2999}, {"camera/frames", 89}}},
                        {"timeout_ms", 25000}};
  Client a(domain, "watch", options);
  Client b(domain, "watch", options);
  REQUIRE(a.subscribed());
  REQUIRE(b.subscribed());
  // Idle with two clients subscribed: the server sleeps (on the WaitSet
  // and the io_context), waking only to ask ferryd for the topic list.
  const pid_t server = fox.program.pid();
  const double idle_start = ferry::test::cpu_seconds(server);
  std::this_thread::sleep_for(1s);
  const double idle = ferry::test::cpu_seconds(server) - idle_start;
  MESSAGE("server CPU while idle: " << idle * 1000 << " ms in 1 s");
  CHECK(idle < 0.05);
  const auto stream_start = std::chrono::steady_clock::now();
  const double cpu_start = ferry::test::cpu_seconds(server);
  Child poses([] { return publish_poses(3000, 1ms); });
  Child frames([] { return publish_frames(90, 33333us, 500ms); });
  CHECK(poses.wait() == 0);
  CHECK(frames.wait() == 0);
  bool dropped = false;
  for (Client* c : {&a, &b}) {
    const json r = c->result();
    CHECK(r["topics"]["robot/pose"]["out_of_order"] == 0);
    CHECK(r["topics"]["camera/frames"]["out_of_order"] == 0);
    CHECK(r["topics"]["camera/frames"]["pixel_errors"] == 0);
    CHECK(r["topics"]["camera/frames"]["first"]["width"] == 1920);
    // Every message or, for a client that fell behind (a sanitizer build, or
    // a machine busy with other tests: keeping up is a figure for the
    // benchmarks, not a test's assertion), a status saying so.
    if (!r["statuses"].empty()) {
      MESSAGE("a client fell behind and was told: " << ferry::test::json_text(r["statuses"]));
      dropped = true;
      continue;
    }
    CHECK(r["why"] == "done");
    CHECK(r["topics"]["robot/pose"]["count"] == 3000);
    CHECK(r["topics"]["robot/pose"]["gaps"] == 0);
    CHECK(r["topics"]["camera/frames"]["count"] == 90);
    CHECK(r["topics"]["camera/frames"]["gaps"] == 0);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - stream_start).count();
  MESSAGE("server CPU while streaming 1 kHz poses and 30 Hz 1080p frames to two clients: "
          << (ferry::test::cpu_seconds(server) - cpu_start) / seconds * 100 << " % of a core");
  CHECK(fox.stop() == 0);
  CHECK((fox.program.err().find("dropped") == std::string::npos) == !dropped);
}

TEST_CASE_FIXTURE(Served,
                  "clientPublish reaches a C++ subscriber and other advertisements are refused") {
  // --topics: only the robot's topics are channels.
  Foxglove fox(domain, {"--topics", "robot/*"});
  Child subscriber([] {
    ferry::Node node{"commander"};
    auto sub = node.subscriber<Pose>("robot/cmd");
    for (std::uint64_t i = 0; i < 20; ++i) {
      auto s = sub.take(10s);
      if (!s) return 3;
      const Pose& p = **s;
      if (p.seq != i || p.x != static_cast<double>(i) / 2 || p.y != -static_cast<double>(i) ||
          p.z != 0.25 || p.ok != (i % 2 == 0) || std::string(p.frame) != "fox")
        return 4;
    }
    return 0;
  });
  REQUIRE(eventually(
      [&] {
        return ferry::test::ferry_json(domain, {"topic", "info", "robot/cmd"})["subscribers"]
                   .size() == 1;
      },
      10s, 20ms));
  Client publisher(domain, "publish",
                   {{"url", fox.url},
                    {"topic", "robot/cmd"},
                    {"schema_name", "geo/msg/Pose"},
                    {"count", 20},
                    {"interval_ms", 5}});
  const json r = publisher.result();
  CHECK(subscriber.wait(15s) == 0);
  CHECK(r["topics"] == json::array({"robot/cmd", "robot/pose"}));
  REQUIRE(r["refused"].size() == 5);
  const std::map<std::string, std::string> expected = {
      {"schema", "has schema 'geo/msg/Pose', not 'other/msg/Pose'"},
      {"topic", "no ferry topic 'no/such/topic'"},
      {"encoding", "encoding 'json' is not supported"},
      {"truncated", "not published"},
      {"unadvertised", "client channel 4242 is not advertised"}};
  for (const auto& refusal : r["refused"]) {
    const std::string what = refusal["what"];
    CAPTURE(what);
    CAPTURE(ferry::test::json_text(refusal));
    REQUIRE(refusal["status"].size() >= 1);
    CHECK(refusal["status"][0]["level"] == 2);
    CHECK(refusal["status"][0]["message"].get<std::string>().find(expected.at(what)) !=
          std::string::npos);
  }
  CHECK(fox.stop() == 0);
}

TEST_CASE_FIXTURE(Served,
                  "bad input gets a status or a closed connection and the others are served") {
  Foxglove fox(domain, {"--max-clients", "3"});
  Child poses([] { return publish_poses(1500, 10ms); });  // for the good client at the end
  Client hostile(domain, "hostile",
                 {{"url", fox.url}, {"max_clients", 3}, {"alive_topic", "robot/pose"}});
  const json r = hostile.result();
  CAPTURE(ferry::test::json_text(r));
  CHECK(r["plain_http"]["status"] == 426);
  CHECK(r["no_subprotocol"]["status"] == 400);
  CHECK(r["wrong_subprotocol"]["status"] == 400);
  for (const auto& [name, statuses] : r["statuses"].items()) {
    CAPTURE(name);
    REQUIRE(statuses.size() >= 1);
    CHECK(statuses[0].get<std::string>().starts_with("2:"));  // level error
  }
  CHECK(r["statuses"].size() == 18);
  CHECK(r["still_open_after_garbage"] == true);
  CHECK(r["held_open"] == 3);
  CHECK(r["one_too_many"]["status"] == 503);
  CHECK(r["one_too_many"]["body"].get<std::string>().find("at most 3 clients") !=
        std::string::npos);
  CHECK(r["oversized"]["code"] == 1009);  // message too big
  CHECK(r["alive"] == true);
  CHECK(fox.stop() == 0);
  poses.kill(SIGKILL);  // it would publish for 15 s
  CHECK(poses.wait() == 128 + SIGKILL);
}

TEST_CASE_FIXTURE(Served, "kill -9 of the server while clients stream leaves the pool whole") {
  Foxglove fox(domain);
  const json options = {{"url", fox.url}, {"subscribe", {"camera/frames"}}, {"timeout_ms", 15000}};
  Client a(domain, "watch", options);
  Client b(domain, "watch", options);
  REQUIRE(a.subscribed());
  REQUIRE(b.subscribed());
  Child frames([] { return publish_frames(90, 33333us, 500ms); });
  REQUIRE(a.program.out_contains("subscribed", 1s));
  std::this_thread::sleep_for(1s);  // frames flow to both
  fox.program.signal(SIGKILL);
  CHECK(fox.program.wait(5s) == 128 + SIGKILL);
  for (Client* c : {&a, &b}) {
    const json r = c->result();
    CHECK(r["why"] == "closed");
    CHECK(r["topics"]["camera/frames"]["count"] > 0);
  }
  CHECK(frames.wait() == 0);  // the camera went on; its observer's death cost it nothing
  CHECK(ferry::test::pool_all_free(domain.name(), [](auto f) { return eventually(f, 10s); }));
}

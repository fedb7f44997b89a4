// ferry bag info: a recording's topics, types, counts, times and size, as
// text and JSON; a file cut short; files that are not MCAP; usage errors.

#include <doctest/doctest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "bag_test_util.hpp"
#include "daemon_fixture.hpp"
#include "ferry/bag/mcap_reader.hpp"
#include "json_text.hpp"
#include "test_domain.hpp"

using namespace std::chrono_literals;
using namespace ferry::test;

TEST_CASE("ferry bag info: topics, types, counts, start, end and size") {
  ferry::test::TestDomain domain;
  bag_test::TempDir dir("bag-cli");
  const auto path = dir / "rec.mcap";
  bag_test::write_recording(
      path,
      ferry::bag::WriterOptions{.compression = ferry::bag::Compression::Lz4, .chunk_size = 1024},
      50);

  const auto r = run_program(domain, {bin_path("ferry"), "bag", "info", path.string(), "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = ferry::test::parse_json(r.out);
  CHECK(j["file"] == path.string());
  CHECK(j["size"] == std::filesystem::file_size(path));
  CHECK(j["messages"] == 100);
  CHECK(j["start_ns"] == 1000);
  CHECK(j["end_ns"] == 1000 + 2 * 49 + 1);
  CHECK(j["duration_ns"] == 2 * 49 + 1);
  CHECK(j["chunks"].get<int>() > 1);
  CHECK(j["compression"] == nlohmann::json::array({"lz4"}));
  CHECK(j["complete"] == true);
  CHECK(j["truncated_at"].is_null());
  REQUIRE(j["topics"].size() == 2);
  CHECK(j["topics"][0] == nlohmann::json{{"topic", "pose"},
                                         {"type", "geo/msg/Pose"},
                                         {"ferry_type", "geo/Pose"},
                                         {"message_encoding", "cdr"},
                                         {"messages", 50}});
  CHECK(j["topics"][1]["topic"] == "log");
  CHECK(j["topics"][1]["type"] == "ferry/msg/Bytes");
  CHECK(j["topics"][1]["messages"] == 50);

  const auto text = run_program(domain, {bin_path("ferry"), "bag", "info", path.string()});
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("Messages:  100\n") != std::string::npos);
  CHECK(text.out.find("Start:     1970-01-01 00:00:00.000 UTC\n") != std::string::npos);
  CHECK(text.out.find("(lz4)") != std::string::npos);
  CHECK(text.out.find("geo/msg/Pose") != std::string::npos);
  CHECK(text.out.find("ferry/msg/Bytes") != std::string::npos);
}

TEST_CASE("ferry bag info: a file cut short shows its complete chunks and exits 1") {
  ferry::test::TestDomain domain;
  bag_test::TempDir dir("bag-cli-cut");
  const auto path = dir / "rec.mcap";
  bag_test::write_recording(path, ferry::bag::WriterOptions{.chunk_size = 512}, 50);
  const ferry::bag::McapReader whole(path);
  const auto& chunk = whole.summary().chunk_indexes.at(2);
  const std::uint64_t cut = chunk.chunk_start_offset + chunk.chunk_length / 2;
  auto bytes = bag_test::read_all(path);
  bytes.resize(cut);
  const auto cut_path = dir / "cut.mcap";
  bag_test::write_all(cut_path, bytes);

  const auto r =
      run_program(domain, {bin_path("ferry"), "bag", "info", cut_path.string(), "--json"});
  CHECK(r.exit_code == 1);
  CHECK(r.err == "ferry: " + cut_path.string() + ": at offset " +
                     std::to_string(chunk.chunk_start_offset) +
                     ": the file is cut short (its recorder did not finish); shown above is what "
                     "its complete chunks hold\n");
  const auto j = ferry::test::parse_json(r.out);
  CHECK(j["complete"] == false);
  CHECK(j["truncated_at"] == chunk.chunk_start_offset);
  CHECK(j["chunks"] == 2);
  CHECK(j["messages"].get<int>() > 0);
}

TEST_CASE("ferry bag info: not an MCAP file, a missing file, no file") {
  ferry::test::TestDomain domain;
  bag_test::TempDir dir("bag-cli-bad");
  const auto path = dir / "notes.txt";
  bag_test::write_all(path, std::vector<std::byte>(64, std::byte{'#'}));
  auto r = run_program(domain, {bin_path("ferry"), "bag", "info", path.string()});
  CHECK(r.exit_code == 1);
  CHECK(r.err == "ferry: " + path.string() +
                     ": at offset 0: is not an MCAP file: no MCAP magic at the start\n");
  CHECK(r.out.empty());

  r = run_program(domain, {bin_path("ferry"), "bag", "info", (dir / "missing.mcap").string()});
  CHECK(r.exit_code == 1);
  CHECK(r.err == "ferry: " + (dir / "missing.mcap").string() +
                     ": cannot open the file: No such file or directory\n");

  r = run_program(domain, {bin_path("ferry"), "bag", "info"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("FILE") != std::string::npos);
}

TEST_CASE("ferry bag info and ferry play refuse a FIFO at once instead of waiting for a writer") {
  ferry::test::TestDomain domain;
  bag_test::TempDir dir("bag-cli-fifo");
  const auto fifo = dir / "pipe.mcap";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const char* verb : {"info", "play"}) {
    CAPTURE(verb);
    const auto r = std::string(verb) == "info"
                       ? run_program(domain, {bin_path("ferry"), "bag", "info", fifo.string()}, 10s)
                       : run_program(domain, {bin_path("ferry"), "play", fifo.string()}, 10s);
    CHECK(r.exit_code == 1);  // -1: still waiting in open() after 10 s
    CHECK(r.err.find(fifo.string() + ": is a FIFO, not a regular file") != std::string::npos);
  }
}

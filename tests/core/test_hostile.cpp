// Shared memory written by another process is untrusted input. A rogue
// process (this test) scribbles random words over every shared-memory
// object of a domain (rings, doorbells, the pool, the heartbeat table)
// while samples flow; the nodes and ferryd must neither crash nor hang:
// they may lose or refuse data (and count it), but every program ends on
// its own, ferryd keeps answering, and a new topic still works.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <random>
#include <vector>

#include "daemon_fixture.hpp"
#include "ferry/discovery/client.hpp"
#include "ferry/transport/names.hpp"
#include "pool_probe.hpp"
#include "pubsub_util.hpp"
#include "queue_probe.hpp"
#include "signal_pipe.hpp"
#include "test_domain.hpp"

using namespace std::chrono_literals;
using namespace ferry::test;

namespace {

const std::string kConfig = seq_config(
    "  - { name: oldest, type: Seq, capacity: 16, policy: drop_oldest }\n"
    "  - { name: blocked, type: Seq, capacity: 16, policy: block, block_timeout_ms: 50 }\n"
    "  - { name: blobs, type: bytes, max_size: 4KiB, capacity: 8, policy: drop_new }\n"
    "  - { name: fresh, type: Seq, capacity: 16, policy: drop_new }\n",
    "liveness: { heartbeat_ms: 20, timeout_ms: 2000 }\n"
    "pool:\n"
    "  - { chunk_size: 4KiB, count: 64 }\n");

using Served = ferry::test::ServedDomain<kConfig>;

// Maps one object of /dev/shm read-write (a rogue peer can do no less).
struct Mapping {
  void* base = MAP_FAILED;
  std::size_t size = 0;
  explicit Mapping(const std::string& name) {
    const int fd = ::open(("/dev/shm/" + name).c_str(), O_RDWR);
    if (fd < 0) return;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && st.st_size > 0) {
      size = static_cast<std::size_t>(st.st_size);
      base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    }
    ::close(fd);
  }
  ~Mapping() {
    if (base != MAP_FAILED) ::munmap(base, size);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
};

// Publishes on every topic for `seconds`, then exits 0: whatever it is told
// by its queues, it must not crash or hang.
int publish_all(double seconds) {
  ferry::Node node{"pub"};
  auto oldest = node.publisher<Seq>("oldest");
  auto blocked = node.publisher<Seq>("blocked");
  auto blobs = node.publisher<ferry::Bytes>("blobs");
  const std::vector<std::byte> blob(1000, std::byte{7});
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (std::uint64_t i = 0; std::chrono::steady_clock::now() < end; ++i) {
    oldest.publish(make_seq(1, i));
    blocked.publish(make_seq(2, i));
    blobs.publish(std::span(blob));
    std::this_thread::sleep_for(100us);
  }
  return 0;
}

// Takes from every topic for `seconds`; raises `flowing` once a sample of
// each has come (the flow the scribbling then disturbs).
int take_all(double seconds, const ferry::test::Signal& flowing) {
  ferry::Node node{"sub"};
  auto oldest = node.subscriber<Seq>("oldest");
  auto blocked = node.subscriber<Seq>("blocked");
  auto blobs = node.subscriber<ferry::Bytes>("blobs");
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::uint64_t sink = 0;
  bool got[3] = {false, false, false};
  bool raised = false;
  while (std::chrono::steady_clock::now() < end) {
    if (!raised && got[0] && got[1] && got[2]) {
      flowing.raise();
      raised = true;
    }
    // Samples may be garbage now; reading them must still be safe.
    if (auto s = oldest.take(1ms)) {
      got[0] = true;
      sink += (*s)->seq;
    }
    if (auto s = blocked.take()) {
      got[1] = true;
      sink += (*s)->seq;
    }
    if (auto s = blobs.take()) {
      got[2] = true;
      const auto* p = (*s)->data();
      for (std::size_t k = 0; k < (*s)->size(); ++k) sink += static_cast<std::uint64_t>(p[k]);
    }
  }
  return sink == 42 ? 0 : 0;  // keeps the reads
}

}  // namespace

TEST_CASE_FIXTURE(
    Served, "scribbling over every shared object while samples flow crashes and hangs nobody") {
  ferry::test::Signal flowing;
  Child pub([] { return publish_all(4.0); });
  Child sub([&] { return take_all(4.5, flowing); });
  REQUIRE(flowing.wait());  // matched, and a sample of each topic came
  REQUIRE(ferry::test::pool_count(domain.name()).total > 0);

  const std::uint64_t seed = 20261130;
  MESSAGE("scribbling with seed " << seed);
  std::mt19937_64 random(seed);
  const auto end = std::chrono::steady_clock::now() + 2s;
  std::uint64_t writes = 0;
  while (std::chrono::steady_clock::now() < end) {
    for (const auto& name : ferry::transport::list_domain_objects(domain.name())) {
      Mapping m(name);
      if (m.base == MAP_FAILED || m.size < 8) continue;
      auto* words = static_cast<std::uint64_t*>(m.base);
      const std::size_t count = m.size / 8;
      for (int k = 0; k < 16; ++k) {
        // Mostly the live parts (past the 64-byte segment header), now and
        // then the header itself (not the pool's and the heartbeat table's:
        // those are checked below, alone).
        // The pool's own header and class table (its first 8 KiB) are
        // copied by every node at attach: overwriting them only locks out
        // newcomers, with an error (the second test).
        const bool shared_by_all = name.ends_with(".pool") || name.ends_with(".registry");
        const std::size_t skip = name.ends_with(".pool") ? 1024 : 8;
        if (count <= skip) continue;
        const std::size_t at = !shared_by_all && random() % 8 == 0
                                   ? random() % std::min<std::size_t>(count, 8)
                                   : skip + random() % (count - skip);
        if (at >= count) continue;
        std::uint64_t value = random();
        if (random() % 4 == 0) value &= 0xFF;  // small numbers look plausible
        __atomic_store_n(&words[at], value, __ATOMIC_RELAXED);
        ++writes;
      }
    }
    std::this_thread::sleep_for(1ms);
  }
  CHECK(writes > 1000);
  // Both end on their own, without a signal.
  CHECK(pub.wait(20s) == 0);
  CHECK(sub.wait(20s) == 0);
  // ferryd survived and still serves: a new topic works end to end.
  const auto listed =
      ferry::test::run_program(domain, {ferry::test::bin_path("ferry"), "topic", "list"});
  CHECK(listed.exit_code == 0);
  ferry::Node node{"after"};
  auto [fresh_pub, fresh_sub] = matched_ports<Seq>(node, "fresh");
  CHECK(fresh_pub.publish(make_seq(9, 1)).delivered == 1);
  auto s = fresh_sub.take(1s);
  REQUIRE(s);
  CHECK((*s)->seq == 1);
}

TEST_CASE_FIXTURE(
    Served, "a node refuses a pool whose header was overwritten, with a sentence, not a crash") {
  // ferryd accepts on its socket a moment before its pool exists.
  REQUIRE(eventually([&] { return ferry::test::pool_count(domain.name()).total > 0; }));
  {
    Mapping pool("ferry." + domain.name() + ".pool");
    REQUIRE(pool.base != MAP_FAILED);
    static_cast<std::uint64_t*>(pool.base)[0] = 0x0BADC0DE0BADC0DEULL;  // the magic
  }
  CHECK_THROWS_WITH_AS(ferry::Node{"victim"}, doctest::Contains("pool"), ferry::Error);
  CHECK_THROWS_WITH_AS(ferry::Node{"victim"}, doctest::Contains(domain.name().c_str()),
                       ferry::Error);
}

TEST_CASE_FIXTURE(
    Served,
    "a queue slot with an impossible length is skipped and counted; the samples around it "
    "arrive") {
  ferry::Node node{"victim"};
  auto [pub, sub] = matched_ports<Seq>(node, "fresh");
  for (std::uint64_t i = 0; i < 3; ++i) REQUIRE(pub.publish(make_seq(1, i)).delivered == 1);

  auto rings = ferry::test::open_queue_rings(domain.name());
  REQUIRE(rings.size() == 1);  // one subscriber, one publisher: one queue
  std::byte* ring = rings[0].payload();
  const auto before = ferry::transport::read_ring_stats(ring, rings[0].payload_size());
  REQUIRE(before.valid);
  REQUIRE(before.backlog == 3);
  CHECK(before.corrupt == 0);
  // The rogue peer rewrites the length of the second queued sample (seq 1)
  // to more than a slot holds.
  auto* length =
      reinterpret_cast<std::uint32_t*>(ferry::test::queued_slot(rings[0], 1) +
                                       offsetof(ferry::transport::ring_layout::SlotHeader, length));
  __atomic_store_n(length, 0xFFFFFFFFu, __ATOMIC_RELAXED);

  auto first = sub.take(1s);
  REQUIRE(first);
  CHECK((*first)->seq == 0);
  auto third = sub.take(1s);
  REQUIRE(third);
  CHECK((*third)->seq == 2);  // seq 1 was skipped, not handed out as garbage
  CHECK(intact(**third));
  CHECK_FALSE(sub.take(10ms));
  const auto after = ferry::transport::read_ring_stats(ring, rings[0].payload_size());
  CHECK(after.corrupt == 1);
  CHECK(after.popped == before.popped + 2);
}

TEST_CASE_FIXTURE(
    Served,
    "a forged pool reference in a queue is refused and counted; the chunks around it arrive") {
  ferry::Node node{"victim"};
  auto [pub, sub] = matched_ports<ferry::Bytes>(node, "blobs");
  for (std::uint8_t i = 0; i < 3; ++i) {
    const std::vector<std::byte> blob(1000, std::byte{i});
    REQUIRE(pub.publish(std::span(blob)).delivered == 1);
  }
  const auto pool_before = ferry::test::pool_stats(domain.name());
  REQUIRE(pool_before.valid);

  auto rings = ferry::test::open_queue_rings(domain.name());
  REQUIRE(rings.size() == 1);
  // The second queued sample's reference ({ref, size} after the slot header)
  // now names size class 255: no such class.
  auto* ref = reinterpret_cast<std::uint64_t*>(ferry::test::queued_slot(rings[0], 1) +
                                               ferry::transport::ring_layout::kSlotHeaderBytes);
  const auto real = ferry::transport::ChunkRef::unpack(__atomic_load_n(ref, __ATOMIC_RELAXED));
  REQUIRE(real.generation != 0);  // it was a pool reference
  __atomic_store_n(ref, ferry::transport::ChunkRef{255, real.index, real.generation}.pack(),
                   __ATOMIC_RELAXED);

  for (const std::uint8_t expected : {std::uint8_t{0}, std::uint8_t{2}}) {
    auto s = sub.take(1s);
    REQUIRE(s);
    REQUIRE((*s)->size() == 1000);
    CHECK((*s)->data()[999] == std::byte{expected});
  }
  CHECK_FALSE(sub.take(10ms));
  CHECK(ferry::test::pool_stats(domain.name()).invalid_refs == pool_before.invalid_refs + 1);
}

namespace {

// What ferryd answers one CreatePublisher of `request`: "created", or the
// refusal's sentence.
std::string publisher_reply(ferry::discovery::Client& client,
                            const ferry::discovery::PortRequest& request) {
  auto reply = client.request(ferry::discovery::CreatePublisher{request}, 5s);
  if (!reply) return "no reply: " + reply.error();
  if (std::holds_alternative<ferry::discovery::PortCreated>(*reply)) return "created";
  if (const auto* e = std::get_if<ferry::discovery::Error>(&*reply)) return e->message;
  return "unexpected reply";
}

ferry::discovery::PortRequest port_request(std::string topic, std::string type, std::uint64_t size,
                                           std::uint32_t align) {
  ferry::discovery::PortRequest r;
  r.topic = std::move(topic);
  r.type_name = std::move(type);
  r.type_size = size;
  r.type_align = align;
  return r;
}

}  // namespace

TEST_CASE_FIXTURE(Served,
                  "ferryd refuses invalid topic names and impossible type layouts with a "
                  "sentence, and tables print names' control characters escaped") {
  auto client = ferry::discovery::Client::connect(domain.name(), "asker", 5s);
  REQUIRE(client.has_value());
  const auto seq = [](std::string topic) { return port_request(std::move(topic), "Seq", 64, 8); };
  for (const char* bad : {"/lead", "trail/", "a//b", "line\nbreak", "esc\x1b]0;x\x07", "sp ace"}) {
    CAPTURE(bad);
    CHECK(publisher_reply(*client, seq(bad)).find("is not a valid topic name") !=
          std::string::npos);
  }
  const std::uint64_t huge = ~std::uint64_t{0};
  for (const auto& [size, align] : std::vector<std::pair<std::uint64_t, std::uint32_t>>{
           {0, 8}, {huge, 8}, {64, 0}, {64, 3}, {64, 1u << 20}, {12, 8}}) {
    CAPTURE(size);
    CAPTURE(align);
    CHECK(publisher_reply(*client, port_request("undeclared", "Odd", size, align))
              .find("a type needs a size from 1 to") != std::string::npos);
  }
  CHECK(publisher_reply(*client, port_request("bad/type", "Se\nq", 64, 8))
            .find("is not a valid type name") != std::string::npos);
  // Seq is declared (64 bytes, alignment 8): not another size on another topic.
  CHECK(publisher_reply(*client, port_request("undeclared", "Seq", 16, 8))
            .find("type 'Seq' is declared with size 64") != std::string::npos);
  CHECK(publisher_reply(*client, seq("undeclared")) == "created");

  // A node named to forge a row and retitle the terminal is refused; a
  // name with other odd characters is shown escaped.
  auto forger = ferry::discovery::Client::connect(domain.name(), "x\x1b]0;owned\x07\nFAKE 1 2", 5s);
  REQUIRE_FALSE(forger.has_value());
  CHECK(forger.error().find("may not hold control characters") != std::string::npos);
  auto odd = ferry::discovery::Client::connect(domain.name(),
                                               "odd\xc2\x9b"
                                               "2J\\",
                                               5s);
  REQUIRE(odd.has_value());
  const auto listed =
      ferry::test::run_program(domain, {ferry::test::bin_path("ferry"), "node", "list"});
  CHECK(listed.exit_code == 0);
  CHECK(listed.out.find("\xc2\x9b") == std::string::npos);
  CHECK(listed.out.find("odd\\x9b2J\\\\") != std::string::npos);
}

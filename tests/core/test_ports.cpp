// Creating ports: what ferryd refuses and how it says so, isolation between
// domains, and a daemon that shrugs off bad clients.
#include <doctest/doctest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "daemon_fixture.hpp"
#include "pubsub_util.hpp"
#include "test_domain.hpp"

using namespace std::chrono_literals;
using namespace ferry::test;

struct Other {  // same size as Seq, another name
  std::uint64_t words[8];
};
FERRY_TYPE(Other);

struct Small {
  std::uint32_t value;
};
FERRY_TYPE_NAMED(Small, "Seq");  // Seq's name, the wrong size

namespace {

int raw_connect(const TestDomain& domain) {
  const std::string path = (domain.runtime_dir() / (domain.name() + ".sock")).string();
  const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  return fd;
}

}  // namespace

TEST_CASE("a node without a running ferryd fails with the socket path and how to start ferryd") {
  TestDomain domain;
  ferry::test::use_domain_env(domain);
  CHECK_THROWS_WITH_AS(ferry::Node{"lonely"}, doctest::Contains((domain.name() + ".sock").c_str()),
                       ferry::Error);
  CHECK_THROWS_WITH_AS(ferry::Node{"lonely"}, doctest::Contains("ferryd --config"), ferry::Error);
}

TEST_CASE("a port whose type differs from the topic's is refused with both types named") {
  ServedConfig served(seq_config("  - { name: t, type: Seq }\n"));
  ferry::Node node{"test"};
  CHECK_THROWS_WITH_AS(node.publisher<Other>("t"), doctest::Contains("'Other'"), ferry::Error);
  CHECK_THROWS_WITH_AS(node.publisher<Other>("t"), doctest::Contains("'Seq'"), ferry::Error);
  CHECK_THROWS_WITH_AS(node.subscriber<Small>("t"), doctest::Contains("size 4"), ferry::Error);
  CHECK_THROWS_WITH_AS(node.subscriber<Small>("t"), doctest::Contains("size 64"), ferry::Error);
  // The topic still works for the right type.
  auto pub = node.publisher<Seq>("t");
  CHECK(pub.subscriber_count() == 0);
  // Nobody subscribes: the wait says so once its time is up.
  const auto started = std::chrono::steady_clock::now();
  CHECK_FALSE(pub.wait_for_subscribers(1, std::chrono::milliseconds(50)));
  CHECK(std::chrono::steady_clock::now() - started >= std::chrono::milliseconds(50));
  CHECK(pub.wait_for_subscribers(0, std::chrono::seconds(0)));
}

TEST_CASE("an undeclared topic takes the type of its first port, and later ports must match") {
  ServedConfig served(seq_config("  - { name: t, type: Seq }\n"));
  ferry::Node node{"test"};
  auto pub = node.publisher<Other>("free/topic");
  auto sub = node.subscriber<Other>("free/topic");
  CHECK(pub.wait_for_subscribers(1, std::chrono::seconds(10)));
  CHECK(pub.publish(Other{{1, 2, 3, 4, 5, 6, 7, 8}}).delivered == 1);
  auto s = sub.take(1s);
  REQUIRE(s);
  CHECK((*s)->words[7] == 8);
  CHECK_THROWS_WITH_AS(node.subscriber<Seq>("free/topic"), doctest::Contains("type mismatch"),
                       ferry::Error);
}

TEST_CASE("a strict domain refuses undeclared topics") {
  ServedConfig served(seq_config("  - { name: t, type: Seq }\n", "strict: true\n"));
  ferry::Node node{"test"};
  CHECK_THROWS_WITH_AS(node.publisher<Seq>("not/declared"), doctest::Contains("'not/declared'"),
                       ferry::Error);
  CHECK_THROWS_WITH_AS(node.publisher<Seq>("not/declared"), doctest::Contains("strict"),
                       ferry::Error);
  CHECK_NOTHROW(node.publisher<Seq>("t"));
}

TEST_CASE("max_publishers and max_subscribers are enforced with the limit named") {
  ServedConfig served(
      seq_config("  - { name: t, type: Seq, max_publishers: 1, max_subscribers: 2 }\n"));
  ferry::Node node{"test"};
  auto p1 = node.publisher<Seq>("t");
  CHECK_THROWS_WITH_AS(node.publisher<Seq>("t"), doctest::Contains("max_publishers is 1"),
                       ferry::Error);
  auto s1 = node.subscriber<Seq>("t");
  auto s2 = node.subscriber<Seq>("t");
  CHECK_THROWS_WITH_AS(node.subscriber<Seq>("t"), doctest::Contains("max_subscribers is 2"),
                       ferry::Error);
  {
    auto gone = std::move(p1);  // destroying a port frees its place
  }
  CHECK(eventually([&] {
    try {
      node.publisher<Seq>("t");
      return true;
    } catch (const ferry::Error&) {
      return false;
    }
  }));
}

TEST_CASE("two domains side by side do not see each other") {
  TestDomain a;
  TestDomain b;
  Daemon daemon_a(a, seq_config("  - { name: t, type: Seq }\n"));
  Daemon daemon_b(b, seq_config("  - { name: t, type: Seq }\n"));
  ferry::test::use_domain_env(a);
  ferry::Node node_a{"a"};
  auto pub = node_a.publisher<Seq>("t");
  ferry::test::use_domain_env(b);
  ferry::Node node_b{"b"};
  auto sub = node_b.subscriber<Seq>("t");
  // A port of each side's own domain after the other's: its match is told
  // after any match across the domains would have been (one daemon tells a
  // node in order), so once it is seen nothing else can still come.
  auto pub_b = node_b.publisher<Seq>("t");
  ferry::test::use_domain_env(a);
  auto sub_a = node_a.subscriber<Seq>("t");
  REQUIRE(eventually([&] { return pub.subscriber_count() >= 1 && sub.publisher_count() >= 1; }));
  CHECK(pub.subscriber_count() == 1);
  CHECK(sub.publisher_count() == 1);
  // Only b's sample reaches b's subscriber.
  CHECK(pub.publish(make_seq(0, 0)).delivered == 1);
  CHECK(pub_b.publish(make_seq(1, 0)).delivered == 1);
  auto taken = sub.take(2s);
  REQUIRE(taken);
  CHECK((*taken)->publisher == 1);
  CHECK_FALSE(sub.take());
  CHECK(node_a.domain() == a.name());
  CHECK(node_b.domain() == b.name());
}

TEST_CASE("garbage, half messages and idle connections do not disturb a running flow") {
  ServedConfig served(seq_config("  - { name: t, type: Seq, capacity: 64, policy: block }\n"));
  ferry::Node node{"test"};
  auto [pub, sub] = matched_ports<Seq>(node, "t");

  const int idle = raw_connect(served.domain);  // connects and never says a word
  const int garbage = raw_connect(served.domain);
  const char junk[] = "this is not a ferry message at all";
  CHECK(::send(garbage, junk, sizeof junk, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof junk));
  const int truncated = raw_connect(served.domain);
  const unsigned char header_only[6] = {'F', 'R', 'R', 'Y', 1, 0};
  CHECK(::send(truncated, header_only, sizeof header_only, MSG_NOSIGNAL) == 6);

  for (std::uint64_t i = 0; i < 1000; ++i) {
    CHECK(pub.publish(make_seq(0, i)).delivered == 1);
    auto s = sub.take(1s);
    REQUIRE(s);
    CHECK((*s)->seq == i);
  }
  // The daemon answered the garbage sender with an error and closed it, and
  // still serves new nodes. A receive timeout: a daemon that ignores the
  // garbage fails here instead of hanging the test.
  const timeval five_seconds{.tv_sec = 5, .tv_usec = 0};
  REQUIRE(::setsockopt(garbage, SOL_SOCKET, SO_RCVTIMEO, &five_seconds, sizeof five_seconds) == 0);
  char buf[256];
  CHECK(::recv(garbage, buf, sizeof buf, 0) > 0);   // the error reply
  CHECK(::recv(garbage, buf, sizeof buf, 0) == 0);  // then EOF
  ferry::Node late{"late"};
  auto late_sub = late.subscriber<Seq>("t");
  CHECK(pub.wait_for_subscribers(2, std::chrono::seconds(10)));
  ::close(idle);
  ::close(garbage);
  ::close(truncated);
}

TEST_CASE("raw ports take the topic's type and exchange its bytes with typed ports") {
  ServedConfig served(seq_config("  - { name: t, type: Seq, policy: drop_new }\n"));
  ferry::Node node{"tool"};
  auto raw_sub = node.raw_subscriber("t");
  auto raw_pub = node.raw_publisher("t");
  auto typed_pub = node.publisher<Seq>("t");
  CHECK(raw_sub.sample_size() == sizeof(Seq));
  REQUIRE(eventually([&] { return raw_sub.publisher_count() == 2; }));
  typed_pub.publish(make_seq(3, 4));
  auto s = raw_sub.take(std::chrono::seconds(1));
  REQUIRE(s);
  REQUIRE(s->size() == sizeof(Seq));
  Seq copy;
  std::memcpy(&copy, s->data(), sizeof copy);
  CHECK(copy.seq == 4);
  CHECK(intact(copy));
  const Seq value = make_seq(5, 6);
  CHECK(raw_pub.publish(std::as_bytes(std::span(&value, 1))).delivered == 1);
  const auto wrong_size = raw_pub.publish(std::as_bytes(std::span(&value, 1)).first(8));
  CHECK(wrong_size.delivered == 0);
  CHECK(wrong_size.error == ferry::ErrorCode::TooLarge);  // refused, and says so
  // An undeclared topic with no ports has no type a raw port could take.
  CHECK_THROWS_WITH_AS(node.raw_subscriber("nobody/here"), doctest::Contains("no type yet"),
                       ferry::Error);
}

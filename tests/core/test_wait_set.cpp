// WaitSet across processes through a real ferryd: one sleep over many
// subscribers, every sample in order, no lost wake-up, no cost while idle,
// notify() from a thread and from a signal handler, and wait() returning
// when a subscriber, a publisher or the node goes away.
#include <doctest/doctest.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "daemon_fixture.hpp"
#include "pubsub_util.hpp"
#include "signal_pipe.hpp"
#include "test_domain.hpp"

using namespace std::chrono_literals;
using namespace ferry::test;

namespace {

enum : int { kOk = 0, kNoMatch = 10, kLost = 11, kOrder = 12, kTorn = 13, kTimeout = 14 };

std::string block_topics(std::initializer_list<const char*> names, int capacity = 64) {
  std::string topics;
  for (const char* name : names) {
    topics += "  - { name: " + std::string(name) +
              ", type: Seq, capacity: " + std::to_string(capacity) +
              ", policy: block, block_timeout_ms: 10000 }\n";
  }
  return topics;
}

// Publishes `count` samples of publisher `id`, sleeping `pause` every `every` samples.
int publish_paced(const char* topic, std::uint64_t id, std::uint64_t count, std::uint64_t every,
                  std::chrono::microseconds pause) {
  ferry::Node node{"pub"};
  auto pub = node.publisher<Seq>(topic);
  if (!pub.wait_for_subscribers(1, std::chrono::seconds(10))) return kNoMatch;
  for (std::uint64_t i = 0; i < count; ++i) {
    if (pub.publish(make_seq(id, i)).delivered != 1) return kLost;
    if ((i + 1) % every == 0) std::this_thread::sleep_for(pause);
  }
  return kOk;
}

double thread_cpu_seconds(const rusage& r) {
  return static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
         static_cast<double>(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

bool readable(int fd, int timeout_ms = 0) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN) != 0;
}

// Until thread `tid` of this process sleeps (state S in /proc), at most
// `timeout`: a thread that was about to call wait() then sleeps in it. What
// the other thread does next comes while the waiter sleeps, not by luck.
bool asleep(pid_t tid, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  const std::string path = "/proc/self/task/" + std::to_string(tid) + "/stat";
  return eventually(
      [&] {
        std::ifstream in(path);
        const std::string stat((std::istreambuf_iterator<char>(in)), {});
        const auto paren = stat.rfind(')');
        return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'S';
      },
      timeout);
}

// Drains the WaitSet until its descriptor stays clear for 50 ms (the fd()
// helper may write once more after a wake-up it shared, later under a
// sanitizer and a loaded machine); false after `timeout`.
bool drained(ferry::WaitSet& ws, int fd,
             std::chrono::milliseconds timeout = std::chrono::seconds(2)) {
  return eventually(
      [&] {
        (void)ws.wait(std::chrono::milliseconds(0));
        return !readable(fd, 50);
      },
      timeout);
}

ferry::WaitSet* g_signal_wait_set = nullptr;
void notify_from_signal(int) { g_signal_wait_set->notify(); }

}  // namespace

TEST_CASE(
    "a WaitSet over 3 topics fed by 3 processes at different rates gets every sample in order") {
  ServedConfig served(seq_config(block_topics({"fast", "medium", "slow"})));
  constexpr std::array<std::uint64_t, 3> kCounts{20000, 4000, 400};
  // Children first, while this process has no thread of its own (TSan
  // supports no thread started after a multi-threaded fork).
  Child p0([&] { return publish_paced("fast", 0, kCounts[0], 64, 100us); });
  Child p1([&] { return publish_paced("medium", 1, kCounts[1], 8, 200us); });
  Child p2([&] { return publish_paced("slow", 2, kCounts[2], 1, 1ms); });
  ferry::Node node{"fusion"};
  auto fast = node.subscriber<Seq>("fast");
  auto medium = node.subscriber<Seq>("medium");
  auto slow = node.subscriber<Seq>("slow");
  ferry::WaitSet ws;
  REQUIRE(ws.attach(fast) == 0);
  REQUIRE(ws.attach(medium) == 1);
  REQUIRE(ws.attach(slow) == 2);
  std::array<std::uint64_t, 3> next{};
  bool in_order = true;
  const auto drain = [&](auto& sub, std::size_t i) {
    while (auto s = sub.take()) {
      in_order = in_order && intact(**s) && (*s)->publisher == i && (*s)->seq == next[i];
      ++next[i];
    }
  };
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (next != kCounts && std::chrono::steady_clock::now() < deadline) {
    const ferry::Ready ready = ws.wait(5s);
    REQUIRE_FALSE(ready.empty());  // the publishers never pause for 5 s
    for (std::size_t i : ready) {
      if (i == 0) drain(fast, 0);
      if (i == 1) drain(medium, 1);
      if (i == 2) drain(slow, 2);
    }
  }
  CHECK(in_order);
  CHECK(next == kCounts);
  CHECK(p0.wait() == kOk);
  CHECK(p1.wait() == kOk);
  CHECK(p2.wait() == kOk);
}

TEST_CASE(
    "no lost wake-up: 100,000 samples in bursts with random 0-200 us pauses, never a timeout") {
  ServedConfig served(seq_config(block_topics({"a", "b"}, 16)));
  const std::uint64_t n =
      scaled(50000, 10);  // per topic: 100,000 in all (the 1,000,000 takes too long for CI)
  const auto bursty = [n](const char* topic, std::uint64_t id) {
    ferry::Node node{"bursty"};
    auto pub = node.publisher<Seq>(topic);
    if (!pub.wait_for_subscribers(1, std::chrono::seconds(10))) return int{kNoMatch};
    std::mt19937_64 rng(id);
    std::uniform_int_distribution<int> burst(1, 32);
    std::uniform_int_distribution<int> pause_us(0, 200);
    std::uint64_t i = 0;
    while (i < n) {
      for (int b = burst(rng); b > 0 && i < n; --b, ++i) {
        if (pub.publish(make_seq(id, i)).delivered != 1) return int{kLost};
      }
      const int us = pause_us(rng);
      if (us > 0) std::this_thread::sleep_for(std::chrono::microseconds(us));
    }
    return int{kOk};
  };
  Child pa([&] { return bursty("a", 0); });
  Child pb([&] { return bursty("b", 1); });
  ferry::Node node{"waiter"};
  auto a = node.subscriber<Seq>("a");
  auto b = node.subscriber<Seq>("b");
  ferry::WaitSet ws;
  ws.attach(a);
  ws.attach(b);
  std::array<std::uint64_t, 2> next{};
  bool in_order = true;
  int timeouts = 0;
  const auto started = std::chrono::steady_clock::now();
  while ((next[0] < n || next[1] < n) && std::chrono::steady_clock::now() - started < 30s) {
    // A queued sample is never left waiting for this timeout: it would
    // only expire if a publisher's ring were lost.
    const ferry::Ready ready = ws.wait(2s);
    if (ready.empty()) ++timeouts;
    for (std::size_t i : ready) {
      auto& sub = i == 0 ? a : b;
      while (auto s = sub.take()) {
        in_order = in_order && (*s)->seq == next[i] && intact(**s);
        ++next[i];
      }
    }
  }
  CHECK(timeouts == 0);
  CHECK(in_order);
  CHECK(next[0] == n);
  CHECK(next[1] == n);
  CHECK(pa.wait() == kOk);
  CHECK(pb.wait() == kOk);
}

TEST_CASE(
    "idle costs nothing: 8 idle subscribers, wait 2 s, < 1% CPU and < 20 voluntary switches") {
  ServedConfig served(seq_config(block_topics({"i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7"})));
  ferry::Node node{"idle"};
  std::vector<ferry::Subscriber<Seq>> subs;
  ferry::WaitSet ws;
  for (int i = 0; i < 8; ++i) {
    subs.push_back(node.subscriber<Seq>("i" + std::to_string(i)));
    ws.attach(subs.back());
  }
  rusage before{};
  ::getrusage(RUSAGE_THREAD, &before);
  const auto started = std::chrono::steady_clock::now();
  const ferry::Ready ready = ws.wait(2s);
  const auto slept = std::chrono::steady_clock::now() - started;
  rusage after{};
  ::getrusage(RUSAGE_THREAD, &after);
  CHECK(ready.empty());
  CHECK(slept >= 2s);
  CHECK(slept < 2500ms);
  const double cpu = thread_cpu_seconds(after) - thread_cpu_seconds(before);
  MESSAGE("idle wait: cpu " << cpu * 1e3 << " ms, voluntary switches "
                            << after.ru_nvcsw - before.ru_nvcsw);
  CHECK(cpu < 0.02);  // 1% of 2 s
  CHECK(after.ru_nvcsw - before.ru_nvcsw < 20);
}

TEST_CASE("notify() from another thread wakes wait(); a notify before wait() is not lost") {
  ServedConfig served(seq_config(block_topics({"t"})));
  ferry::Node node{"n"};
  auto sub = node.subscriber<Seq>("t");
  ferry::WaitSet ws;
  ws.attach(sub);
  ws.notify();
  ferry::Ready r = ws.wait(5s);
  CHECK(r.notified());
  CHECK(r.empty());
  for (int round = 0; round < 50; ++round) {
    std::thread waker([&] {
      std::this_thread::sleep_for(std::chrono::microseconds(round * 20));
      ws.notify();
    });
    const auto started = std::chrono::steady_clock::now();
    r = ws.wait(5s);
    CHECK(r.notified());
    CHECK(std::chrono::steady_clock::now() - started < 1s);
    waker.join();
  }
}

TEST_CASE("notify() from a signal handler wakes wait()") {
  ServedConfig served(seq_config(block_topics({"t"})));
  ferry::Node node{"n"};
  auto sub = node.subscriber<Seq>("t");
  ferry::WaitSet ws;
  ws.attach(sub);
  g_signal_wait_set = &ws;
  struct sigaction action {};
  action.sa_handler = notify_from_signal;
  sigemptyset(&action.sa_mask);
  struct sigaction previous {};
  REQUIRE(::sigaction(SIGUSR1, &action, &previous) == 0);
  const pthread_t waiter = ::pthread_self();
  const pid_t waiter_tid = ::gettid();
  std::thread sender([waiter, waiter_tid] {
    CHECK(asleep(waiter_tid));
    ::pthread_kill(waiter, SIGUSR1);
  });
  const auto started = std::chrono::steady_clock::now();
  const ferry::Ready r = ws.wait(5s);
  const auto took = std::chrono::steady_clock::now() - started;
  sender.join();
  ::sigaction(SIGUSR1, &previous, nullptr);
  g_signal_wait_set = nullptr;
  CHECK(r.notified());
  CHECK(took < 1s);
}

TEST_CASE(
    "attach refuses a 65th subscriber, a second attach and a moved-from subscriber, naming them") {
  ServedConfig served(seq_config("  - { name: t, type: Seq, capacity: 4, max_subscribers: 70 }\n"));
  ferry::Node node{"n"};
  std::vector<ferry::Subscriber<Seq>> subs;
  ferry::WaitSet ws;
  for (std::size_t i = 0; i < ferry::WaitSet::kMaxAttachments; ++i) {
    subs.push_back(node.subscriber<Seq>("t"));
    CHECK(ws.attach(subs.back()) == i);
  }
  auto extra = node.subscriber<Seq>("t");
  CHECK_THROWS_WITH_AS(ws.attach(extra),
                       "cannot attach the subscriber of topic 't': the WaitSet already has 64 "
                       "attachments, its limit",
                       ferry::Error);
  CHECK_THROWS_WITH_AS(ws.attach(subs[3]),
                       "the subscriber of topic 't' is already attached to this WaitSet (index 3)",
                       ferry::Error);
  ferry::WaitSet other;
  CHECK_THROWS_WITH_AS(
      other.attach(subs[3]),
      "the subscriber of topic 't' is attached to another WaitSet; detach it there first",
      ferry::Error);
  auto moved_to = std::move(extra);
  CHECK_THROWS_WITH_AS(
      ws.attach(extra),  // NOLINT(bugprone-use-after-move): the point of the test
      "cannot attach a moved-from subscriber to a WaitSet: it has no topic any more", ferry::Error);
  CHECK_THROWS_WITH_AS(ws.detach(moved_to),
                       "the subscriber of topic 't' is not attached to this WaitSet", ferry::Error);
  // A detached index is free again; the subscriber can go to another WaitSet.
  ws.detach(subs[3]);
  CHECK(ws.size() == 63);
  CHECK(other.attach(subs[3]) == 0);
  CHECK(ws.attach(moved_to) == 3);
}

TEST_CASE(
    "a subscriber destroyed on another thread while attached wakes wait(), which reports its "
    "index") {
  ServedConfig served(seq_config(block_topics({"t", "u"})));
  ferry::Node node{"n"};
  auto keep = node.subscriber<Seq>("t");
  std::optional<ferry::Subscriber<Seq>> doomed(node.subscriber<Seq>("u"));
  ferry::WaitSet ws;
  ws.attach(keep);
  CHECK(ws.attach(*doomed) == 1);
  const pid_t waiter_tid = ::gettid();
  std::thread killer([&] {
    CHECK(asleep(waiter_tid));
    doomed.reset();
  });
  const auto started = std::chrono::steady_clock::now();
  const ferry::Ready r = ws.wait(5s);
  CHECK(std::chrono::steady_clock::now() - started < 2s);
  killer.join();
  CHECK(r.contains(1));
  CHECK(ws.size() == 1);
  CHECK(ws.wait(10ms).empty());  // reported once
}

TEST_CASE(
    "a publisher killed while a WaitSet sleeps: wait() returns promptly, try_take() is empty") {
  ServedConfig served(seq_config(block_topics({"t"})));
  Signal matched;
  Child pub([&] {  // before our node's thread exists (TSan and fork)
    ferry::Node pnode{"doomed"};
    auto p = pnode.publisher<Seq>("t");
    if (!p.wait_for_subscribers(1, std::chrono::seconds(10))) return int{kNoMatch};
    matched.raise();
    std::this_thread::sleep_for(60s);
    return int{kOk};
  });
  ferry::Node node{"n"};
  auto sub = node.subscriber<Seq>("t");
  ferry::WaitSet ws;
  ws.attach(sub);
  REQUIRE(matched.wait());
  REQUIRE(eventually([&] { return sub.publisher_count() == 1; }));
  (void)ws.wait(0ms);  // the match itself was news: consumed here
  const pid_t waiter_tid = ::gettid();
  std::thread killer([&] {
    CHECK(asleep(waiter_tid));
    pub.kill(SIGKILL);
  });
  const auto started = std::chrono::steady_clock::now();
  const ferry::Ready r = ws.wait(10s);
  const auto took = std::chrono::steady_clock::now() - started;
  killer.join();
  MESSAGE("wait() returned " << std::chrono::duration<double, std::milli>(took).count()
                             << " ms after the publisher was killed");
  CHECK(took < 2s);
  CHECK(r.contains(0));
  const auto taken = sub.try_take();
  REQUIRE(taken.has_value());
  CHECK_FALSE(taken->has_value());
  CHECK(sub.publisher_count() == 0);
}

TEST_CASE(
    "fd() in an epoll loop: readable while a sample waits or after notify(), clear once drained") {
  ServedConfig served(seq_config(block_topics({"a", "b"})));
  constexpr std::uint64_t kEach = 2000;
  // Children before our threads (TSan and fork).
  Child pa([] { return publish_paced("a", 0, kEach, 16, 300us); });
  Child pb([] { return publish_paced("b", 1, kEach, 4, 500us); });
  ferry::Node node{"loop"};
  auto a = node.subscriber<Seq>("a");
  auto b = node.subscriber<Seq>("b");
  ferry::WaitSet ws;
  ws.attach(a);
  ws.attach(b);
  const int fd = ws.fd();
  CHECK(ws.fd() ==
        fd);  // one descriptor (the publishers may have sent already: no readability check)
  const int ep = ::epoll_create1(EPOLL_CLOEXEC);
  REQUIRE(ep >= 0);
  epoll_event ev{};
  ev.events = EPOLLIN;
  REQUIRE(::epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0);
  std::array<std::uint64_t, 2> next{};
  bool in_order = true;
  int stalls = 0;
  const auto started = std::chrono::steady_clock::now();
  while ((next[0] < kEach || next[1] < kEach) && std::chrono::steady_clock::now() - started < 20s) {
    epoll_event out{};
    if (::epoll_wait(ep, &out, 1, 2000) != 1) {
      ++stalls;  // the publishers never pause for 2 s
      continue;
    }
    for (std::size_t i : ws.wait(0ms)) {
      auto& sub = i == 0 ? a : b;
      while (auto s = sub.take()) {
        in_order = in_order && (*s)->seq == next[i] && intact(**s);
        ++next[i];
      }
    }
  }
  CHECK(stalls == 0);
  CHECK(in_order);
  CHECK(next[0] == kEach);
  CHECK(next[1] == kEach);
  CHECK(pa.wait() == kOk);
  CHECK(pb.wait() == kOk);
  // Drained: once the publishers' leaving was reported (and the helper
  // woke for it), one wait(0) clears the descriptor; notify() makes it readable.
  REQUIRE(eventually([&] { return a.publisher_count() == 0 && b.publisher_count() == 0; }));
  CHECK(drained(ws, fd));
  CHECK(ws.wait(0ms).empty());
  ws.notify();
  CHECK(readable(fd, 1000));
  CHECK(ws.wait(0ms).notified());
  CHECK(drained(ws, fd));
  CHECK_FALSE(ws.wait(0ms).notified());  // reported once
  ::close(ep);
}

TEST_CASE(
    "fd() in a Boost.Asio posix::stream_descriptor gets every sample, with a timer beside it") {
  ServedConfig served(seq_config(block_topics({"a"})));
  constexpr std::uint64_t kCount = 3000;
  // The child before our threads (TSan and fork).
  Child pa([] { return publish_paced("a", 0, kCount, 8, 200us); });
  ferry::Node node{"asio"};
  auto a = node.subscriber<Seq>("a");
  ferry::WaitSet ws;
  ws.attach(a);
  boost::asio::io_context io;
  // The WaitSet owns the descriptor: asio gets a duplicate it may close.
  boost::asio::posix::stream_descriptor input(io, ::dup(ws.fd()));
  std::uint64_t next = 0;
  bool in_order = true;
  std::function<void()> arm = [&] {
    input.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                     [&](const boost::system::error_code& ec) {
                       if (ec) return;
                       for (std::size_t i : ws.wait(0ms)) {
                         (void)i;
                         while (auto s = a.take()) {
                           in_order = in_order && (*s)->seq == next++;
                         }
                       }
                       if (next < kCount) {
                         arm();
                       } else {
                         io.stop();
                       }
                     });
  };
  arm();
  int ticks = 0;
  boost::asio::steady_timer timer(io);
  std::function<void()> tick = [&] {
    timer.expires_after(10ms);
    timer.async_wait([&](const boost::system::error_code& ec) {
      if (ec) return;
      ++ticks;
      tick();
    });
  };
  tick();
  io.run_for(20s);
  CHECK(in_order);
  CHECK(next == kCount);
  CHECK(ticks > 0);
  CHECK(pa.wait() == kOk);
}

TEST_CASE(
    "a node declared dead while its WaitSet sleeps: wait() returns, try_take() says "
    "NodeDeclaredDead") {
  TestDomain domain;
  Daemon daemon(
      domain, seq_config(block_topics({"t"}), "liveness: { heartbeat_ms: 20, timeout_ms: 400 }\n"));
  ferry::test::use_domain_env(domain);
  Signal waiting;
  Child sleeper([&] {
    ferry::Node node{"sleeper"};
    auto sub = node.subscriber<Seq>("t");
    ferry::WaitSet ws;
    ws.attach(sub);
    waiting.raise();
    const auto started = std::chrono::steady_clock::now();
    const ferry::Ready r = ws.wait(20s);  // SIGSTOPped and declared dead meanwhile
    if (!r.contains(0)) return 2;
    if (std::chrono::steady_clock::now() - started > 10s) return 4;
    const auto taken = sub.try_take();
    if (taken || taken.error() != ferry::ErrorCode::NodeDeclaredDead) return 3;
    return 0;
  });
  REQUIRE(waiting.wait());
  ::kill(sleeper.pid(), SIGSTOP);
  std::this_thread::sleep_for(1200ms);  // 3 x timeout_ms without a beat
  ::kill(sleeper.pid(), SIGCONT);
  CHECK(sleeper.wait(15s) == 0);
}

namespace {

// Calls wait(0) until nothing is reported: the fd() helper then sleeps over
// every attachment's doorbell (wait() armed it on this thread), the
// descriptor read clear.
void settle(ferry::WaitSet& ws) {
  for (int i = 0; i < 100 && !ws.wait(0ms).empty(); ++i) {
  }
}

// Polls `fd` and calls wait(0) as an event loop does, until `index` is
// reported or `within` passes.
bool reported_through_fd(ferry::WaitSet& ws, int fd, std::size_t index,
                         std::chrono::milliseconds within) {
  const auto end = std::chrono::steady_clock::now() + within;
  while (std::chrono::steady_clock::now() < end) {
    if (readable(fd, 200) && ws.wait(0ms).contains(index)) return true;
  }
  return false;
}

}  // namespace

TEST_CASE(
    "a subscriber attached while the fd() helper sleeps is watched: its first sample makes fd() "
    "readable") {
  ServedConfig served(seq_config(block_topics({"a", "b"})));
  ferry::Node node{"n"};
  auto pub_b = node.publisher<Seq>("b");
  auto a = node.subscriber<Seq>("a");
  ferry::WaitSet ws;
  ws.attach(a);
  const int fd = ws.fd();
  settle(ws);  // the helper sleeps over a's doorbell only
  auto b = node.subscriber<Seq>("b");
  REQUIRE(pub_b.wait_for_subscribers(1, std::chrono::seconds(10)));
  const std::size_t ib = ws.attach(b);
  // What an event loop does when attach() made the descriptor readable: one
  // wait(0), nothing ready yet.
  (void)ws.wait(0ms);
  REQUIRE(pub_b.publish(make_seq(0, 0)).delivered == 1);
  CHECK(reported_through_fd(ws, fd, ib, 3s));
  auto s = b.take();
  REQUIRE(s);
  CHECK((*s)->seq == 0);
}

TEST_CASE(
    "a child forked while the fd() helper sleeps destroys its copies of the WaitSet and the "
    "attached subscriber: the parent's wake-ups are intact") {
  ServedConfig served(seq_config(block_topics({"t"})));
  ferry::Node node{"n"};
  auto pub = node.publisher<Seq>("t");
  for (const bool subscriber_first : {false, true}) {
    CAPTURE(subscriber_first);
    std::optional<ferry::Subscriber<Seq>> sub(node.subscriber<Seq>("t"));
    REQUIRE(pub.wait_for_subscribers(1, std::chrono::seconds(10)));
    std::optional<ferry::WaitSet> ws(std::in_place);
    ws->attach(*sub);
    const int fd = ws->fd();
    // The helper started by fd() reports the attach when it runs: wait for
    // that before the child, whose notify() must leave the descriptor clear.
    REQUIRE(drained(*ws, fd));
    Child child([&] {
      // The child's copies are its parent's: using them is an error, and
      // letting go of them must touch nothing the parent shares (doorbell
      // counts, the helper thread, the eventfd, a mutex the fork may have
      // caught held).
      try {
        (void)ws->wait(0ms);
        return 5;
      } catch (const ferry::Error&) {
      }
      ws->notify();  // writes nothing into the parent's eventfd
      if (subscriber_first) sub.reset();
      ws.reset();
      sub.reset();
      return 0;
    });
    CHECK(child.wait(10s) == 0);
    CHECK_FALSE(readable(fd));  // the child's notify() was its own
    // The parent's helper still sleeps on the doorbell, counted there: the
    // next sample wakes it.
    REQUIRE(pub.publish(make_seq(0, 1)).delivered == 1);
    CHECK(reported_through_fd(*ws, fd, 0, 3s));
    auto s = sub->take();
    REQUIRE(s);
    CHECK((*s)->seq == 1);
    ws.reset();
    sub.reset();
  }
}

TEST_CASE(
    "a subscriber destroyed on another thread while its WaitSet with fd() is destroyed writes "
    "no descriptor after it was closed") {
  ServedConfig served(seq_config(block_topics({"t"})));
  ferry::Node node{"n"};
  // TSan sees the race between the port's write and ~WaitSet's close (both
  // orders happen over the rounds); without TSan the rounds check that a
  // descriptor opened after the close, which may reuse the number, stays empty.
  for (int round = 0; round < static_cast<int>(scaled(40, 20)); ++round) {
    CAPTURE(round);
    std::optional<ferry::Subscriber<Seq>> sub(node.subscriber<Seq>("t"));
    std::optional<ferry::WaitSet> ws(std::in_place);
    ws->attach(*sub);
    (void)ws->fd();
    std::thread other([&] { sub.reset(); });
    ws.reset();
    std::array<int, 2> fds{};
    REQUIRE(::pipe(fds.data()) == 0);
    other.join();
    CHECK_FALSE(readable(fds[0]));
    ::close(fds[0]);
    ::close(fds[1]);
  }
}

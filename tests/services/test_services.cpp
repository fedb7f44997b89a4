// Services across processes with the real ferryd (docs/services.md): calls,
// calls in flight, one server at a time, a server or a client killed, ferryd
// restarted while calls flow, many calls from many clients, none crossed.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/mman.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "daemon_fixture.hpp"
#include "eventually.hpp"
#include "pool_probe.hpp"
#include "service_types.hpp"
#include "signal_pipe.hpp"
#include "test_domain.hpp"
#include "test_scale.hpp"

using namespace std::chrono_literals;
using ferry::ErrorCode;
using namespace ferry::test;

namespace {

const std::string kConfig = service_config();
using Served = ferry::test::ServedDomain<kConfig>;

// Shared by the test and its children (an anonymous shared mapping).
struct Board {
  std::atomic<std::uint64_t> served{0};
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> taken_unanswered{0};
};

Board* make_board() {
  void* shared =
      ::mmap(nullptr, sizeof(Board), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  REQUIRE(shared != MAP_FAILED);
  return new (shared) Board{};
}

// Answers calc/add until told to stop; `ready` once it serves.
int add_server(Board& board, Signal* ready, const char* name = "adder") {
  ferry::Node node{name};
  auto server = node.server<AddRequest, AddResponse>("calc/add");
  if (ready != nullptr) ready->raise();
  while (!board.stop.load()) {
    if (auto request = server.take_request(20ms)) {
      request->respond(answer(**request));
      board.served.fetch_add(1);
    }
  }
  return 0;
}

// Calls `count` times, checking every answer; the number of failures.
int call_many(ferry::Client<AddRequest, AddResponse>& client, std::uint64_t id,
              std::uint64_t count) {
  int bad = 0;
  for (std::uint64_t n = 0; n < count; ++n) {
    const AddRequest q{id, n, n * 3, id};
    auto r = client.call(q, 2s);
    if (!r || (*r)->client != id || (*r)->n != n || (*r)->sum != n * 3 + id) ++bad;
  }
  return bad;
}

}  // namespace

// Children are forked before this process makes a node (and its threads):
// a fork after threads is what TSan cannot follow.
TEST_CASE_FIXTURE(Served, "calls across processes: every answer right, in a row and at once") {
  Board& board = *make_board();
  Signal ready;
  Child server([&] { return add_server(board, &ready); });
  REQUIRE(ready.wait());
  // 4 clients x 5,000 calls at once, each its own process.
  std::vector<Child> clients;
  for (std::uint64_t c = 0; c < 4; ++c) {
    clients.emplace_back([c] {
      ferry::Node n{"caller-" + std::to_string(c)};
      auto cl = n.client<AddRequest, AddResponse>("calc/add");
      if (!cl.wait_for_server(5s)) return 2;
      return call_many(cl, 100 + c, ferry::test::scaled(5000)) == 0 ? 0 : 1;
    });
  }
  for (auto& c : clients) CHECK(c.wait() == 0);

  // 20,000 in a row from this process.
  ferry::Node node{"caller"};
  auto client = node.client<AddRequest, AddResponse>("calc/add");
  REQUIRE(client.wait_for_server(5s));
  CHECK(client.capacity() == 8);
  CHECK(call_many(client, 1, ferry::test::scaled(20000)) == 0);
  CHECK(client.late_responses() == 0);
  board.stop.store(true);
  CHECK(server.wait() == 0);
}

TEST_CASE_FIXTURE(Served, "8 calls in flight, answered out of order, and NoResponse") {
  Board& board = *make_board();
  Signal ready;
  // Takes 8 requests, answers them in reverse order, drops the 9th.
  Child server([&] {
    ferry::Node node{"reverser"};
    auto srv = node.server<AddRequest, AddResponse>("calc/add");
    ready.raise();
    std::vector<ferry::Request<AddRequest, AddResponse>> held;
    while (held.size() < 8) {
      if (auto r = srv.take_request(5s))
        held.push_back(std::move(*r));
      else
        return 3;
    }
    for (auto it = held.rbegin(); it != held.rend(); ++it) it->respond(answer(**it));
    auto dropped = srv.take_request(5s);  // destroyed unanswered: NoResponse
    if (!dropped) return 4;
    dropped.reset();
    while (!board.stop.load()) {
      if (auto r = srv.take_request(20ms)) r->respond(answer(**r));
    }
    return 0;
  });
  REQUIRE(ready.wait());
  ferry::Node node{"caller"};
  auto client = node.client<AddRequest, AddResponse>("calc/add");
  REQUIRE(client.wait_for_server(5s));
  std::vector<ferry::Pending<AddRequest, AddResponse>> pending;
  for (std::uint64_t n = 0; n < 8; ++n) {
    auto p = client.send(AddRequest{7, n, n, 1});
    REQUIRE(p);
    CHECK(p->sequence() == n);
    pending.push_back(std::move(*p));
  }
  CHECK(client.pending() == 8);
  CHECK(client.send(AddRequest{7, 99, 0, 0}).error() == ErrorCode::TooManyPending);
  for (std::uint64_t n = 0; n < 8; ++n) {
    auto r = pending[n].take(5s);
    REQUIRE(r);
    CHECK((*r)->n == n);
    CHECK((*r)->sum == n + 1);
  }
  CHECK(client.pending() == 0);
  auto none = client.call(AddRequest{7, 8, 0, 0}, 5s);
  REQUIRE(!none);
  CHECK(none.error() == ErrorCode::NoResponse);
  // A call that times out: its late answer is dropped and counted.
  auto fine = client.call(AddRequest{7, 9, 2, 2}, 5s);
  REQUIRE(fine);
  CHECK((*fine)->sum == 4);
  board.stop.store(true);
  CHECK(server.wait() == 0);
}

TEST_CASE_FIXTURE(Served, "a request held while its client leaves is answered safely") {
  Board& board = *make_board();
  Signal ready;
  Signal first_gone;
  // Holds client A's request while A leaves and client B makes its first
  // call (the server then makes B's responder and forgets the clients that
  // left); answering A afterwards must reach nobody and touch nothing freed.
  Child server([&] {
    ferry::Node node{"holder"};
    auto srv = node.server<AddRequest, AddResponse>("calc/add");
    ready.raise();
    auto from_a = srv.take_request(5s);
    if (!from_a) return 3;
    if (!eventually([&] { return srv.client_count() == 0; }, 5s)) return 4;
    first_gone.raise();
    auto from_b = srv.take_request(5s);
    if (!from_b) return 5;
    if (from_a->respond(answer(**from_a)).delivered != 0) return 6;
    if (from_b->respond(answer(**from_b)).delivered != 1) return 7;
    while (!board.stop.load()) {
      if (auto r = srv.take_request(20ms)) r->respond(answer(**r));
    }
    return 0;
  });
  REQUIRE(ready.wait());
  {
    ferry::Node node{"caller-a"};
    auto client = node.client<AddRequest, AddResponse>("calc/add");
    REQUIRE(client.wait_for_server(5s));
    REQUIRE(client.send(AddRequest{1, 0, 1, 1}));
  }  // A leaves with its call pending
  REQUIRE(first_gone.wait());
  ferry::Node node{"caller-b"};
  auto client = node.client<AddRequest, AddResponse>("calc/add");
  REQUIRE(client.wait_for_server(5s));
  auto r = client.call(AddRequest{2, 0, 2, 3}, 5s);
  REQUIRE(r);
  CHECK((*r)->sum == 5);
  board.stop.store(true);
  CHECK(server.wait() == 0);
}

TEST_CASE_FIXTURE(Served, "one server at a time: a second is refused naming the first") {
  ferry::Node first{"first-server"};
  auto server = first.server<AddRequest, AddResponse>("calc/add");
  ferry::Node second{"second-server"};
  try {
    (void)second.server<AddRequest, AddResponse>("calc/add");
    FAIL("a second server was accepted");
  } catch (const ferry::Error& e) {
    const std::string what = e.what();
    CHECK(what.find("calc/add") != std::string::npos);
    CHECK(what.find("first-server") != std::string::npos);
  }
  // Wrong types are refused with both sides named.
  auto wrong_types = [&] { (void)second.client<AddResponse, AddResponse>("calc/add"); };
  CHECK_THROWS_AS(wrong_types(), ferry::Error);
  // No server: NoServer, at once.
  ferry::Node lonely{"lonely"};
  auto big = lonely.client<AddRequest, BigResponse>("calc/big");
  CHECK(!big.has_server());
  CHECK(big.call(AddRequest{}, 1s).error() == ErrorCode::NoServer);
}

TEST_CASE_FIXTURE(Served,
                  "a server killed mid-call: ServerGone within 1.5 s, then a new one serves") {
  Signal holding;
  Child doomed([&] {
    ferry::Node node{"doomed"};
    auto srv = node.server<AddRequest, AddResponse>("calc/add");
    auto r = srv.take_request(10s);  // and never answers
    if (!r) return 3;
    holding.raise();
    for (;;) std::this_thread::sleep_for(1s);
  });
  ferry::Node node{"caller"};
  auto client = node.client<AddRequest, AddResponse>("calc/add");
  REQUIRE(client.wait_for_server(5s));
  auto first = client.send(AddRequest{1, 0, 1, 1});
  auto second = client.send(AddRequest{1, 1, 1, 1});
  REQUIRE(first);
  REQUIRE(second);
  REQUIRE(holding.wait());
  doomed.kill(SIGKILL);
  const auto killed = std::chrono::steady_clock::now();
  auto r = first->take(10s);
  const auto waited = std::chrono::steady_clock::now() - killed;
  REQUIRE(!r);
  CHECK(r.error() == ErrorCode::ServerGone);
  CHECK(waited < 1500ms);
  CHECK(second->take(1s).error() == ErrorCode::ServerGone);  // every pending call
  CHECK(doomed.wait() == 128 + SIGKILL);

  // A new server takes over (in this process: single-threaded, send first).
  ferry::Node successor{"successor"};
  auto srv = successor.server<AddRequest, AddResponse>("calc/add");
  REQUIRE(client.wait_for_server(5s));
  auto again = client.send(AddRequest{1, 2, 20, 22});
  REQUIRE(again);
  auto q = srv.take_request(5s);
  REQUIRE(q);
  q->respond(answer(**q));
  auto r2 = again->take(5s);
  REQUIRE(r2);
  CHECK((*r2)->sum == 42);
}

TEST_CASE_FIXTURE(Served, "a client killed with loaned responses pending leaves the pool whole") {
  Signal sent;
  Signal answered;
  Child doomed([&] {
    ferry::Node node{"doomed-client"};
    auto cl = node.client<AddRequest, BigResponse>("calc/big");
    if (!cl.wait_for_server(5s)) return 2;
    std::vector<ferry::Pending<AddRequest, BigResponse>> pending;
    for (std::uint64_t n = 0; n < 8; ++n) {
      auto p = cl.send(AddRequest{1, n, 0, 0});
      if (!p) return 3;
      pending.push_back(std::move(*p));
    }
    // Holds two responses, leaves the rest in its ring.
    auto a = pending[0].take(5s);
    auto b = pending[1].take(5s);
    if (!a || !b) return 4;
    sent.raise();
    for (;;) std::this_thread::sleep_for(1s);
  });
  ferry::Node node{"big-server"};
  auto srv = node.server<AddRequest, BigResponse>("calc/big");
  for (int n = 0; n < 8; ++n) {
    auto r = srv.take_request(5s);
    REQUIRE(r);
    auto loan = r->loan_response();
    REQUIRE(loan);
    (*loan)->n = (*r)->n;
    std::memset((*loan)->bytes, 0x5a, sizeof(*loan)->bytes);
    CHECK(r->respond(std::move(*loan)).delivered == 1);
  }
  REQUIRE(sent.wait());
  doomed.kill(SIGKILL);
  CHECK(doomed.wait() == 128 + SIGKILL);
  CHECK(eventually([&] { return srv.client_count() == 0; }, 5s));
  CHECK(ferry::test::pool_all_free(domain.name(), [](auto f) { return eventually(f, 5s); }));
}

TEST_CASE_FIXTURE(Served, "ferryd killed and restarted while calls flow") {
  Board& board = *make_board();
  Signal ready;
  Child server([&] { return add_server(board, &ready); });
  REQUIRE(ready.wait());
  ferry::Node node{"caller"};
  auto client = node.client<AddRequest, AddResponse>("calc/add");
  REQUIRE(client.wait_for_server(5s));
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> done{0};
  std::atomic<int> bad{0};
  std::thread caller([&] {
    for (std::uint64_t n = 0; !stop.load(); ++n) {
      auto r = client.call(AddRequest{5, n, n, n}, 3s);
      if (!r || (*r)->n != n || (*r)->sum != 2 * n) {
        bad.fetch_add(1);
      }
      done.fetch_add(1);
    }
  });
  auto progress = [&] {
    const std::uint64_t start = done.load();
    return eventually([&] { return done.load() >= start + 200; }, 10s);
  };
  CHECK(progress());
  daemon.kill9();
  CHECK(progress());  // no ferryd at all
  daemon.start();
  CHECK(progress());
  CHECK(progress());
  stop.store(true);
  caller.join();
  CHECK(bad.load() == 0);
  // A client that comes after the restart is served too.
  ferry::Node late{"late-caller"};
  auto late_client = late.client<AddRequest, AddResponse>("calc/add");
  REQUIRE(late_client.wait_for_server(5s));
  auto r = late_client.call(AddRequest{6, 0, 1, 2}, 5s);
  REQUIRE(r);
  CHECK((*r)->sum == 3);
  board.stop.store(true);
  CHECK(server.wait() == 0);
}

TEST_CASE_FIXTURE(Served, "WaitSet and Executor serve") {
  ferry::Node node{"exec-server"};
  auto srv = node.server<AddRequest, AddResponse>("calc/add");
  ferry::Executor exec;
  exec.serve(srv, [](const AddRequest& q) { return answer(q); });
  ferry::Node other{"caller"};
  auto client = other.client<AddRequest, AddResponse>("calc/add");
  REQUIRE(client.wait_for_server(5s));
  auto p = client.send(AddRequest{3, 0, 40, 2});
  REQUIRE(p);
  ferry::WaitSet ws;
  const std::size_t index = ws.attach(client);
  exec.spin_for(200ms);
  auto ready = ws.wait(5s);
  CHECK(ready.contains(index));
  auto r = p->take(1s);
  REQUIRE(r);
  CHECK((*r)->sum == 42);
}

TEST_CASE_FIXTURE(Served, "a late response is dropped and counted; the next call gets its own") {
  ferry::Node node{"slow-server"};
  auto srv = node.server<AddRequest, AddResponse>("calc/add");
  ferry::Node other{"caller"};
  auto client = other.client<AddRequest, AddResponse>("calc/add");
  REQUIRE(client.wait_for_server(5s));
  auto late = client.call(AddRequest{1, 0, 1, 1}, 50ms);  // nobody answers in time
  REQUIRE(!late);
  CHECK(late.error() == ErrorCode::Timeout);
  CHECK(client.pending() == 0);
  {
    auto q = srv.take_request(1s);
    REQUIRE(q);
    CHECK(q->info().sequence == 0);
    q->respond(answer(**q));  // too late
  }
  auto p = client.send(AddRequest{1, 1, 2, 2});
  REQUIRE(p);
  auto q = srv.take_request(1s);
  REQUIRE(q);
  q->respond(answer(**q));
  auto r = p->take(1s);
  REQUIRE(r);
  CHECK((*r)->n == 1);
  CHECK((*r)->sum == 4);
  CHECK(client.late_responses() == 1);
}

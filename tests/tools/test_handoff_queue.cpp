// HandoffQueue (tools/ferry/handoff_queue.hpp), the FIFO between ferry
// record's taking and writing threads: order, bounds, close, and a producer
// and a consumer on two threads (run under TSan, label tsan).

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "handoff_queue.hpp"

using ferry::cli::HandoffQueue;

TEST_CASE("handoff queue: entries come out in order; room and size follow them") {
  HandoffQueue<int> q(4);
  CHECK(q.capacity() == 4);
  CHECK(q.room() == 4);
  for (int i = 0; i < 3; ++i) q.back(static_cast<std::size_t>(i)) = i + 10;
  q.push(3);
  CHECK(q.room() == 1);
  CHECK(q.room() == 1);
  REQUIRE(q.wait_front() == 3);
  CHECK(q.front(0) == 10);
  CHECK(q.front(2) == 12);
  q.pop(2);
  CHECK(q.room() == 3);
  CHECK(q.front(0) == 12);
  // The slots wrap around.
  for (int i = 0; i < 3; ++i) q.back(static_cast<std::size_t>(i)) = i + 20;
  q.push(3);
  CHECK(q.room() == 0);
  REQUIRE(q.wait_front() == 4);
  CHECK(q.front(0) == 12);
  CHECK(q.front(3) == 22);
  q.pop(4);
  CHECK(q.room() == 4);
}

TEST_CASE("handoff queue: close hands over what is queued, then nothing") {
  HandoffQueue<int> q(2);
  q.back(0) = 7;
  q.push(1);
  q.close();
  CHECK(q.room() == 0);
  REQUIRE(q.wait_front() == 1);
  CHECK(q.front(0) == 7);
  q.pop(1);
  CHECK(q.wait_front() == 0);
}

TEST_CASE("handoff queue: wait_for_pop returns at the deadline when nothing is popped") {
  HandoffQueue<int> q(1);
  q.push(1);
  const auto start = std::chrono::steady_clock::now();
  q.wait_for_pop(std::chrono::milliseconds(20));
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(20));
}

TEST_CASE("handoff queue: a producer and a consumer thread pass every entry once, in order") {
  constexpr std::uint64_t kEntries = 200000;
  HandoffQueue<std::uint64_t> q(64);
  std::vector<std::uint64_t> got;
  got.reserve(kEntries);
  std::thread consumer([&] {
    while (std::size_t n = q.wait_front()) {
      // Pops in uneven steps, as the recorder does after a held sample.
      std::size_t done = 0;
      while (done < n) {
        got.push_back(q.front(done++));
        if (got.back() % 7 == 0) {
          q.pop(done);
          n -= done;
          done = 0;
        }
      }
      q.pop(done);
    }
  });
  std::uint64_t next = 0;
  while (next < kEntries) {
    std::size_t room = q.room();
    if (room == 0) {
      q.wait_for_pop(std::chrono::milliseconds(1));
      continue;
    }
    std::size_t n = 0;
    while (n < room && next < kEntries && n < 5) q.back(n++) = next++;
    q.push(n);
  }
  q.close();
  consumer.join();
  REQUIRE(got.size() == kEntries);
  bool in_order = true;
  for (std::uint64_t i = 0; i < kEntries; ++i) in_order = in_order && got[i] == i;
  CHECK(in_order);
}

// The C API from C++ (its header compiled as C++): the hot path allocates
// nothing (every operator new and malloc on the thread is counted, through
// libferry_c too), and samples are released on other threads, also after
// their subscriber is gone (threaded: in the TSan suite).
#include <doctest/doctest.h>

#include <array>
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "alloc_counter.hpp"
#include "daemon_fixture.hpp"
#include "eventually.hpp"
#include "ferry/ferry.h"
#include "temp_files.hpp"
#include "test_domain.hpp"

using ferry::test::eventually;

namespace {

// The C API's types as C++ sees them (a plain struct: the generated C header
// is C11 only). Layout of c_api.yaml's Reading, checked by ferryd.
struct Reading {
  std::uint64_t seq;
  double value;
  char label[12];
  std::uint16_t flags;
  std::uint8_t raw[26];
};
static_assert(sizeof(Reading) == 56 && alignof(Reading) == 8);

std::string c_api_yaml() { return ferry::test::read_file(FERRY_TEST_C_YAML); }

struct Ports {
  Ports() {
    ferry::test::use_domain_env(domain);
    REQUIRE(ferry_node_create("hot", nullptr, &node) == FERRY_OK);
    REQUIRE(ferry_subscriber_create(node, "c/loop", "Reading", sizeof(Reading), alignof(Reading),
                                    &sub) == FERRY_OK);
    REQUIRE(ferry_publisher_create(node, "c/loop", "Reading", sizeof(Reading), alignof(Reading),
                                   &pub) == FERRY_OK);
    REQUIRE(ferry_publisher_wait_for_subscribers(pub, 1, 10'000'000'000) == 1);
  }
  ~Ports() {
    ferry_publisher_destroy(pub);
    ferry_subscriber_destroy(sub);
    ferry_node_destroy(node);
  }
  Ports(const Ports&) = delete;
  Ports& operator=(const Ports&) = delete;
  ferry::test::TestDomain domain;
  ferry::test::Daemon daemon{domain, c_api_yaml()};
  ferry_node_t* node = nullptr;
  ferry_publisher_t* pub = nullptr;
  ferry_subscriber_t* sub = nullptr;
};

}  // namespace

TEST_CASE_FIXTURE(
    Ports, "C publish, loan, take, release and batches (copied and loaned) allocate nothing") {
  std::array<Reading, 8> batch{};
  std::array<Reading, 8> out{};
  std::size_t got = 0;
  ferry_sample_t* s = nullptr;
  // Warm up every path once.
  Reading r{};
  REQUIRE(ferry_publish(pub, &r, sizeof r, nullptr) == FERRY_OK);
  REQUIRE(ferry_take(sub, 1'000'000'000, &s) == FERRY_OK);
  REQUIRE(s != nullptr);
  REQUIRE(ferry_sample_release(s) == FERRY_OK);
  REQUIRE(ferry_publish_many(pub, batch.data(), batch.size(), sizeof(Reading), nullptr) ==
          FERRY_OK);
  REQUIRE(ferry_take_many(sub, out.data(), out.size(), sizeof(Reading), 1'000'000'000, &got) ==
          FERRY_OK);

  std::size_t bad = 0;
  std::size_t counted = 0;
  {
    ferry::test::CountThreadAllocations guard;
    for (std::uint64_t i = 0; i < 20000; ++i) {
      r.seq = i;
      ferry_publish_result_t result{};
      if (i % 2 == 0) {
        if (ferry_publish(pub, &r, sizeof r, &result) != FERRY_OK) ++bad;
      } else {
        ferry_loan_t* loan = nullptr;
        void* data = nullptr;
        if (ferry_loan(pub, &loan, &data) != FERRY_OK) break;
        std::memcpy(data, &r, sizeof r);
        if (ferry_publish_loan(pub, loan, &result) != FERRY_OK) ++bad;
      }
      if (result.delivered != 1) ++bad;
      if (ferry_take(sub, 0, &s) != FERRY_OK || s == nullptr) {
        ++bad;
        continue;
      }
      if (static_cast<const Reading*>(ferry_sample_data(s))->seq != i) ++bad;
      if (ferry_sample_info(s).sequence == 0) ++bad;
      if (ferry_sample_release(s) != FERRY_OK) ++bad;
      if (i % 64 == 0) {
        if (ferry_publish_many(pub, batch.data(), batch.size(), sizeof(Reading), &result) !=
                FERRY_OK ||
            ferry_take_many(sub, out.data(), out.size(), sizeof(Reading), 0, &got) != FERRY_OK ||
            got != batch.size())
          ++bad;
        ferry_loan_batch_t* loaned = nullptr;
        void* samples = nullptr;
        if (ferry_loan_many(pub, batch.size(), &loaned, &samples) != FERRY_OK) {
          ++bad;
          break;
        }
        std::memcpy(samples, batch.data(), sizeof batch);
        if (ferry_publish_loan_many(pub, loaned, &result) != FERRY_OK ||
            ferry_take_many(sub, out.data(), out.size(), sizeof(Reading), 0, &got) != FERRY_OK ||
            got != batch.size())
          ++bad;
      }
      // Error paths on the hot path write their sentence without allocating.
      if (i % 1000 == 0 && ferry_publish(pub, &r, 3, nullptr) != FERRY_ERROR_INVALID_ARGUMENT)
        ++bad;
    }
    counted = ferry::test::thread_allocations();
  }
  CHECK(counted == 0);
  CHECK(bad == 0);
}

TEST_CASE_FIXTURE(Ports,
                  "C samples are released on other threads, also after their subscriber is "
                  "destroyed") {
  constexpr int kRounds = 200;
  std::vector<std::thread> releasers;
  std::atomic<int> ok{0};
  for (int round = 0; round < kRounds; ++round) {
    Reading r{};
    r.seq = static_cast<std::uint64_t>(round);
    REQUIRE(ferry_publish(pub, &r, sizeof r, nullptr) == FERRY_OK);
    ferry_sample_t* s = nullptr;
    REQUIRE(ferry_take(sub, 1'000'000'000, &s) == FERRY_OK);
    REQUIRE(s != nullptr);
    releasers.emplace_back([s, round, &ok] {
      if (static_cast<const Reading*>(ferry_sample_data(s))->seq ==
              static_cast<std::uint64_t>(round) &&
          ferry_sample_release(s) == FERRY_OK)
        ok.fetch_add(1, std::memory_order_relaxed);
    });
    if (releasers.size() == 3) {  // max_held is 4: one free slot for the next take
      for (auto& t : releasers) t.join();
      releasers.clear();
    }
  }
  for (auto& t : releasers) t.join();
  releasers.clear();
  CHECK(ok.load() == kRounds);

  // Held samples outlive a destroyed subscriber; released on other threads.
  ferry_subscriber_t* late = nullptr;
  REQUIRE(ferry_subscriber_create(node, "c/loop", "Reading", sizeof(Reading), alignof(Reading),
                                  &late) == FERRY_OK);
  REQUIRE(ferry_publisher_wait_for_subscribers(pub, 2, 10'000'000'000) == 2);
  std::vector<ferry_sample_t*> held;
  for (std::uint64_t i = 0; i < 4; ++i) {
    Reading r{};
    r.seq = 1000 + i;
    REQUIRE(ferry_publish(pub, &r, sizeof r, nullptr) == FERRY_OK);
    ferry_sample_t* s = nullptr;
    REQUIRE(ferry_take(late, 1'000'000'000, &s) == FERRY_OK);
    REQUIRE(s != nullptr);
    held.push_back(s);
  }
  ferry_subscriber_destroy(late);
  ok = 0;
  for (std::size_t i = 0; i < held.size(); ++i) {
    releasers.emplace_back([s = held[i], i, &ok] {
      if (static_cast<const Reading*>(ferry_sample_data(s))->seq == 1000 + i &&
          ferry_sample_release(s) == FERRY_OK)
        ok.fetch_add(1, std::memory_order_relaxed);
    });
  }
  for (auto& t : releasers) t.join();
  CHECK(ok.load() == 4);
  // The main subscriber's queue got the same four: drain them.
  for (int i = 0; i < 4; ++i) {
    ferry_sample_t* s = nullptr;
    REQUIRE(ferry_take(sub, 1'000'000'000, &s) == FERRY_OK);
    REQUIRE(s != nullptr);
    CHECK(ferry_sample_release(s) == FERRY_OK);
  }
}

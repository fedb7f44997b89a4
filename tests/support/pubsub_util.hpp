#pragma once
// Shared pieces of the multi-process pub/sub tests: a 64-byte sample that
// carries its publisher and sequence number, the YAML that declares it, and
// helpers (waits: eventually.hpp).

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <ferry/ferry.hpp>
#include <string>
#include <thread>

#include "eventually.hpp"
#include "test_scale.hpp"

struct Seq {
  std::uint64_t publisher;
  std::uint64_t seq;
  std::uint64_t check;  // publisher ^ seq * constant: a torn sample fails it
  std::uint64_t pad[5];
};
FERRY_TYPE(Seq);
static_assert(sizeof(Seq) == 64);

inline Seq make_seq(std::uint64_t publisher, std::uint64_t seq) {
  return Seq{publisher, seq, publisher ^ (seq * 0x9E3779B97F4A7C15ULL), {}};
}
inline bool intact(const Seq& s) {
  return s.check == (s.publisher ^ (s.seq * 0x9E3779B97F4A7C15ULL));
}

// A config declaring Seq and the given topic lines (YAML list items).
inline std::string seq_config(const std::string& topics, const std::string& extra = "") {
  return "types:\n"
         "  Seq:\n"
         "    fields:\n"
         "      - { name: publisher, type: u64 }\n"
         "      - { name: seq, type: u64 }\n"
         "      - { name: check, type: u64 }\n"
         "      - { name: pad, type: \"u64[5]\" }\n" +
         extra + "topics:\n" + topics;
}

// A publisher and a subscriber of `topic` on `node`, made in that order and
// matched by ferryd on both sides (the running test fails after 10 s
// otherwise): the publisher sees the subscriber's queue, and the subscriber
// has been handed it, so a poll right after a delivered publish finds the
// sample (the two ports learn of the match one after the other):
//   auto [pub, sub] = matched_ports<Seq>(node, "t");
template <class T>
struct MatchedPorts {
  ferry::Publisher<T> pub;
  ferry::Subscriber<T> sub;
};
template <class T>
MatchedPorts<T> matched_ports(ferry::Node& node, const std::string& topic) {
  MatchedPorts<T> ports{node.publisher<T>(topic), node.subscriber<T>(topic)};
  REQUIRE(ports.pub.wait_for_subscribers(1, std::chrono::seconds(10)));
  REQUIRE(eventually([&] { return ports.sub.publisher_count() >= 1; }, std::chrono::seconds(10)));
  return ports;
}

// Sanitizer builds run fewer iterations of the long tests (test_scale.hpp).
using ferry::test::eventually;
using ferry::test::kSanitized;
using ferry::test::scaled;

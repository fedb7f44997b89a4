#pragma once
// Forked children around one port of a test's topic: a subscriber that tells
// the test it has subscribed, and a publisher that waits for the test's
// subscriber. The child's exit code is what `body` returns.

#include <chrono>
#include <ferry/ferry.hpp>
#include <string>

#include "signal_pipe.hpp"
#include "test_domain.hpp"

namespace ferry::test {

// Node `node_name` subscribes to `topic`, raises `subscribed`, then runs
// body(subscriber).
template <class T, class Body>
Child subscriber_child(const std::string& node_name, const std::string& topic, Signal& subscribed,
                       Body body) {
  return Child([node_name, topic, &subscribed, body] {
    ferry::Node node{node_name};
    auto subscriber = node.subscriber<T>(topic);
    subscribed.raise();
    return body(subscriber);
  });
}

// Node "pub" creates a publisher on `topic` and, once `subscribed` was
// raised and one subscriber matched (10 s at most, else exit code 1), runs
// body(publisher).
template <class T, class Body>
Child publisher_child(const std::string& topic, Signal& subscribed, Body body) {
  return Child([topic, &subscribed, body] {
    ferry::Node node{"pub"};
    auto publisher = node.publisher<T>(topic);
    if (!subscribed.wait() || !publisher.wait_for_subscribers(1, std::chrono::seconds(10)))
      return 1;
    return body(publisher);
  });
}

}  // namespace ferry::test

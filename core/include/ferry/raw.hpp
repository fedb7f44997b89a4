#pragma once
/// @file
/// Untyped ports, for tools that learn a topic's type at run time (the ferry
/// CLI, bridges, recorders). They take the topic's own type: the sample is a
/// byte span of the topic's sample size. Created by Node::raw_publisher /
/// Node::raw_subscriber. Typed code should use Publisher<T> / Subscriber<T>.

#include "ferry/raw_loan.hpp"
#include "ferry/raw_publisher.hpp"
#include "ferry/raw_sample.hpp"
#include "ferry/raw_subscriber.hpp"

#pragma once
/// @file
/// ferry: shared-memory publish/subscribe between processes on one machine.
/// The one header to include.
///
///     struct Pose { std::uint64_t stamp_ns; double x, y; char frame[16]; };
///     FERRY_TYPE(Pose);
///
///     ferry::Node node{"planner"};
///     auto pub = node.publisher<Pose>("robot/pose");
///     pub.publish(Pose{...});
///     auto sub = node.subscriber<Pose>("robot/pose");
///     if (auto s = sub.take(std::chrono::milliseconds(100))) use((*s)->x);

#include "ferry/bounded.hpp"
#include "ferry/bytes.hpp"
#include "ferry/error.hpp"
#include "ferry/executor.hpp"
#include "ferry/loan.hpp"
#include "ferry/loan_batch.hpp"
#include "ferry/node.hpp"
#include "ferry/publish_result.hpp"
#include "ferry/publisher.hpp"
#include "ferry/raw.hpp"
#include "ferry/sample.hpp"
#include "ferry/sample_info.hpp"
#include "ferry/service.hpp"
#include "ferry/subscriber.hpp"
#include "ferry/type_name.hpp"
#include "ferry/wait_set.hpp"

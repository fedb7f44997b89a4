#pragma once
// One filled-in instance of every message type, for round-trip and fuzz tests.

#include <string>
#include <vector>

#include "ferry/discovery/messages.hpp"

namespace ferry::discovery::test {

inline std::vector<Message> sample_messages() {
  TopicConfig config{Policy::Block, 64, 128, 500, TopicLimits{1, 8, 4, 16, 1}, 40, 0};
  TopicInfo pose{"robot/pose",
                 "Pose",
                 Policy::DropOldest,
                 16,
                 40,
                 {PortInfo{1, "planner", 101}},
                 {PortInfo{2, "viewer", 102}, PortInfo{3, "logger", 103, true}},
                 {QueueInfo{1, 2, "ferry.demo.ring.1-2"}, QueueInfo{1, 3, "ferry.demo.ring.1-3"}}};
  TopicInfo logs{"logs/text", "bytes", Policy::DropNew, 4, 0, {}, {}, {}};
  return {
      Hello{1, "planner", 4242, 5},
      Welcome{7, "demo", 100, 1000, "ferry.demo.registry", 3},
      CreatePublisher{{"robot/pose", "Pose", 40, 8, 0, {}, "stamp_ns:u64@0 x:f64@8"}},
      CreateSubscriber{
          {"camera/frames", "camera/Frame", 3110408, 4, 12, "ferry.demo.bell.12", {}, true}},
      PortCreated{11, config, "ferry.demo.doorbells", 192},
      DestroyPort{11},
      PortDestroyed{11},
      Matched{11, 12, "viewer", 4343, 5, "ferry.demo.ring.11-12", "ferry.demo.doorbells", 256, 9,
              true},
      Unmatched{11, 12, UnmatchReason::PeerTimedOut},
      Error{RefusalCode::TypeMismatch,
            "topic 'robot/pose' has type Pose (40 bytes, align 8), the port asked for Pose2"},
      ListTopics{0, "", 5},
      TopicList{2, 0, {pose, logs}, 1, 7},
      Ping{},
      Pong{},
      ListNodes{3},
      NodeList{2,
               0,
               {NodeInfo{7,
                         "planner",
                         4242,
                         3,
                         1500,
                         20,
                         {NodePortInfo{11, "robot/pose"}},
                         {NodePortInfo{12, "robot/cmd"}, NodePortInfo{13, "camera/frames"}}},
                NodeInfo{8, "viewer", 4343, 4, 10, 0, {}, {}}}},
      GetConfig{32768},
      ConfigText{"examples/hello/hello.yaml", 40000, 32768, "topics:\n  - { name: t }\n"},
      QueueReleased{11, 12},
  };
}

}  // namespace ferry::discovery::test

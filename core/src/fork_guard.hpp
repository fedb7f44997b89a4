#pragma once
// fork() and the nodes a process has: a child may create and use nodes of
// its own, but the nodes it inherited belong to its parent. The parent's
// runtime threads do not exist in the child, its ferryd connection is the
// parent's, and its queues have the parent's one producer or consumer: a
// child writing them would corrupt the parent's flows.
//
// So, in the child (a pthread_atfork handler, before fork() returns there):
//  - fork_generation() moves on: a NodeRuntime made before it is inherited
//    and refuses every request (NodeRuntime::inherited());
//  - every pool view of this process is marked `inherited`, and its pool
//    and heartbeat-table mappings are replaced by private copy-on-write
//    mappings of the same objects: whatever the child still does through an
//    inherited sample or loan lands in its own pages, never in the parent's;
//  - in that private heartbeat table the node's slot says declared_dead, so
//    every inherited port stops at its next publish/take (the check it makes
//    anyway, at no cost to the hot path) and reports ErrorCode::InheritedNode.
#include <cstdint>

namespace ferry::detail {

struct DomainPoolView;

// How many forks this process came through as the child (0 in a process
// that was not forked after its first node).
[[nodiscard]] std::uint64_t fork_generation() noexcept;

// Makes sure the child's handler runs at every fork from now on, so that
// fork_generation() moves on in a child (a pool view's watch does it too).
// A WaitSet, which may exist before any node, calls it when it is made.
void track_forks() noexcept;

// A pool view joins the list the child's handler walks while it lives.
void watch_across_fork(DomainPoolView& view) noexcept;
void unwatch_across_fork(DomainPoolView& view) noexcept;

}  // namespace ferry::detail

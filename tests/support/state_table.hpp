#pragma once
// For the unit tests of a queue's state table (queue_state.hpp,
// publisher_queue_state.hpp): the table written out move by move, the check
// that a move against it aborts in a checked build, and a ring in shared
// memory to put a queue end on.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <cstddef>
#include <span>
#include <string>
#include <utility>

#include "ferry/transport/ring.hpp"
#include "ferry/transport/segment.hpp"

namespace ferry::test {

// Whether `legal` (the table, move by move) has from -> to.
template <class State>
bool listed(std::span<const std::pair<State, State>> legal, State from, State to) {
  for (const auto& [f, t] : legal) {
    if (f == from && t == to) return true;
  }
  return false;
}

// Checks `legal_move` (the state's own check) against the table, for every
// pair of states in `all`: each move listed is allowed, every other refused.
template <class State, std::size_t N>
void check_table(const std::array<State, N>& all, std::span<const std::pair<State, State>> legal,
                 bool (*legal_move)(State, State)) {
  for (const State from : all) {
    for (const State to : all) {
      CAPTURE(static_cast<int>(from));
      CAPTURE(static_cast<int>(to));
      CHECK(legal_move(from, to) == listed(legal, from, to));
    }
  }
}

// Whether advance(from -> to) aborts (FERRY_CHECK), in a forked child.
template <class State>
bool move_aborts(State from, State to) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    State state = from;
    advance(state, to);  // the state's own, found by ADL
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

// A formatted, sealed ring segment named `name` (the caller removes it).
inline transport::Segment test_ring(const std::string& name,
                                    const transport::RingGeometry& geometry) {
  auto segment =
      transport::Segment::create(name, transport::SegmentKind::Ring, transport::kRingLayoutVersion,
                                 transport::ring_bytes(geometry));
  REQUIRE(segment.has_value());
  REQUIRE(transport::format_ring(segment->payload(), segment->payload_size(), geometry));
  segment->seal();
  return std::move(*segment);
}

}  // namespace ferry::test

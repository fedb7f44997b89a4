#include "queue_counters.hpp"

#include <algorithm>
#include <limits>
#include <set>

#include "ferry/discovery/objects.hpp"
#include "ferry/transport/ring.hpp"

namespace ferry::cli {

namespace {

QueueCounters from_ring(const transport::RingStats& s) {
  QueueCounters q;
  q.delivered = s.pushed;
  q.dropped = s.dropped;
  q.timed_out = s.timed_out;
  q.published = s.pushed + s.dropped + s.timed_out;
  q.taken = s.popped;
  q.overwritten = s.overwritten;
  // Read without a lock while both sides run: clamp what a torn pair of
  // indices could show.
  q.backlog = std::min<std::uint64_t>(s.backlog, s.capacity);
  q.max_backlog = s.max_backlog;
  return q;
}

}  // namespace

std::optional<transport::Segment> open_ring_read_only(const std::string& ring_shm) {
  // ferryd seals a ring before it names it, so a short wait only covers a
  // ring removed between the topic list and this read.
  constexpr std::chrono::milliseconds kOpenWait{50};
  auto segment =
      transport::Segment::open(ring_shm, discovery::kRingKind, transport::kRingLayoutVersion,
                               kOpenWait, transport::SegmentAccess::ReadOnly);
  if (!segment) return std::nullopt;
  return std::move(*segment);
}

std::optional<QueueCounters> RingReader::read(const std::string& ring_shm) {
  auto it = mapped_.find(ring_shm);
  if (it == mapped_.end()) {
    auto segment = open_ring_read_only(ring_shm);
    if (!segment) return std::nullopt;
    it = mapped_.emplace(ring_shm, std::move(*segment)).first;
  }
  const auto stats = transport::read_ring_stats(it->second.payload(), it->second.payload_size());
  if (!stats.valid) return std::nullopt;
  return from_ring(stats);
}

void RingReader::keep_only(const std::vector<std::string>& keep) {
  const std::set<std::string> wanted(keep.begin(), keep.end());
  std::erase_if(mapped_, [&](const auto& entry) { return !wanted.contains(entry.first); });
}

TopicSnapshot snapshot(const discovery::TopicInfo& info, RingReader& rings) {
  TopicSnapshot s;
  s.info = info;
  s.at = std::chrono::steady_clock::now();
  std::set<std::uint64_t> observers;
  for (const auto& p : info.subscribers) {
    if (p.observer) observers.insert(p.port_id);
  }
  for (const auto& q : info.queues) {
    const auto counters = rings.read(q.ring_shm);
    if (!counters) continue;
    s.queues[q.ring_shm] = *counters;
    auto& busiest = s.published_by[q.publisher_port_id];
    busiest = std::max(busiest, counters->published);
    if (observers.contains(q.subscriber_port_id)) continue;
    s.total.delivered += counters->delivered;
    s.total.taken += counters->taken;
    s.total.dropped += counters->dropped;
    s.total.overwritten += counters->overwritten;
    s.total.timed_out += counters->timed_out;
    s.total.backlog += counters->backlog;
    s.total.max_backlog = std::max(s.total.max_backlog, counters->max_backlog);
  }
  for (const auto& [port, published] : s.published_by) s.total.published += published;
  return s;
}

void RateMeter::observe(const TopicSnapshot& s) {
  auto& tracks = topics_[s.info.name];
  std::erase_if(tracks, [&](const auto& t) { return !s.published_by.contains(t.first); });
  for (const auto& [port, count] : s.published_by) {
    auto [it, fresh] = tracks.try_emplace(port);
    Track& t = it->second;
    if (fresh || count < t.last_count) {  // new, or its busiest queue went away: start over
      t = Track{s.at, count, s.at, s.at, count, count, 0, s.at};
      continue;
    }
    t.seen_at = s.at;
    if (count == t.last_count) continue;
    if (t.changes == 0) {
      t.first_at = s.at;
      t.first_count = count;
    }
    t.last_at = s.at;
    t.last_count = count;
    ++t.changes;
  }
}

std::optional<double> RateMeter::rate(const std::string& topic, Clock::time_point now) const {
  const auto found = topics_.find(topic);
  if (found == topics_.end() || found->second.empty()) return std::nullopt;
  double total = 0;
  for (const auto& [port, t] : found->second) {
    const double window = std::chrono::duration<double>(now - t.start).count();
    const double plain =
        window > 0 ? static_cast<double>(t.last_count - t.start_count) / window : 0;
    if (t.changes < 2) {
      total += plain;
      continue;
    }
    const double span = std::chrono::duration<double>(t.last_at - t.first_at).count();
    const double per_second = static_cast<double>(t.last_count - t.first_count) / span;
    // Silent for more than two of its intervals since the last change: it
    // stopped (or slowed down) within the window.
    const double silence = std::chrono::duration<double>(now - t.last_at).count();
    const double interval = span / static_cast<double>(t.changes - 1);
    total += silence > 2 * interval ? plain : per_second;
  }
  return total;
}

std::size_t RateMeter::fewest_changes() const {
  std::size_t fewest = std::numeric_limits<std::size_t>::max();
  for (const auto& [topic, tracks] : topics_) {
    for (const auto& [port, t] : tracks) fewest = std::min(fewest, t.changes);
  }
  return fewest;
}

void RateMeter::restart() {
  for (auto& [topic, tracks] : topics_) {
    for (auto& [port, t] : tracks) {
      t = Track{t.seen_at,    t.last_count, t.seen_at, t.seen_at,
                t.last_count, t.last_count, 0,         t.seen_at};
    }
  }
}

}  // namespace ferry::cli

#include "pool_topics.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "ferry/config/config.hpp"
#include "ferry/config/limits.hpp"

namespace ferry::cli {

namespace {

using TopicSet = std::set<std::string>;

TopicSet topics_of(const std::vector<discovery::NodePortInfo>& ports) {
  TopicSet out;
  for (const auto& p : ports) out.insert(p.topic);
  return out;
}

TopicSet intersect(const TopicSet& a, const TopicSet& b) {
  TopicSet out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::inserter(out, out.end()));
  return out;
}

struct Nodes {
  explicit Nodes(const std::vector<discovery::NodeInfo>& nodes) {
    for (const auto& n : nodes) by_owner.emplace(n.slot, &n);
  }
  [[nodiscard]] const discovery::NodeInfo* find(transport::NodeSlot owner) const {
    const auto it = by_owner.find(owner);
    return it == by_owner.end() ? nullptr : it->second;
  }
  [[nodiscard]] std::string name(transport::NodeSlot owner) const {
    const auto* n = find(owner);
    return n != nullptr ? n->name : fmt::format("owner {}", owner);
  }
  std::map<std::uint32_t, const discovery::NodeInfo*> by_owner;
};

// The topics a chunk nobody has queued can come from (rule 2 of the header).
TopicSet held_candidates(const transport::LiveChunk& chunk, const Nodes& nodes,
                         const TopicSet& pooled) {
  std::optional<TopicSet> from;
  if (const auto* origin = nodes.find(chunk.origin)) from = topics_of(origin->publishers);
  for (std::uint32_t k = 0; k < chunk.holder_count; ++k) {
    const auto& h = chunk.holders[k];
    if (h.owner == chunk.origin) continue;
    const auto* n = nodes.find(h.owner);
    if (n == nullptr) continue;
    const TopicSet subscribed = topics_of(n->subscribers);
    from = from ? intersect(*from, subscribed) : subscribed;
  }
  if (!from) return {};
  TopicSet surely_pooled = intersect(*from, pooled);
  return surely_pooled.empty() ? *from : surely_pooled;
}

}  // namespace

std::string TopicChunks::label() const {
  if (!topic.empty()) return topic;
  const std::string who =
      fmt::format("{} {}", nodes.size() == 1 ? "node" : "nodes", fmt::join(nodes, ", "));
  if (candidates.empty()) return fmt::format("({}, no known topic)", who);
  return fmt::format("({}{} topics {})", who, nodes.size() == 1 ? "," : ";",
                     fmt::join(candidates, ", "));
}

std::vector<TopicChunks> chunks_by_topic(const std::vector<transport::LiveChunk>& chunks,
                                         const std::vector<QueuedChunk>& queued,
                                         const std::vector<discovery::NodeInfo>& node_list,
                                         const std::vector<discovery::TopicInfo>& topics) {
  const Nodes nodes(node_list);
  std::map<std::uint64_t, TopicSet>
      queued_in;  // packed reference -> the topics whose rings hold it
  for (const auto& q : queued) queued_in[q.ref.pack()].insert(q.topic);
  TopicSet pooled;
  for (const auto& t : topics) {
    if (t.type_name == config::kBytesType || t.sample_size > config::kMaxInlineSample)
      pooled.insert(t.name);
  }
  for (const auto& q : queued) pooled.insert(q.topic);

  // (topic, candidates, nodes): a group is keyed by its nodes too, so that
  // two nodes' unsplittable chunks are not merged into one line.
  using Key = std::tuple<std::string, std::vector<std::string>, std::vector<std::string>>;
  std::map<Key, TopicChunks> groups;
  for (const auto& chunk : chunks) {
    TopicSet keepers;
    for (std::uint32_t k = 0; k < chunk.holder_count; ++k)
      keepers.insert(nodes.name(chunk.holders[k].owner));
    const auto in_queue = queued_in.find(chunk.ref.pack());
    const bool is_queued = in_queue != queued_in.end();
    const TopicSet candidates =
        is_queued ? in_queue->second : held_candidates(chunk, nodes, pooled);
    Key key;
    if (candidates.size() == 1) {
      std::get<0>(key) = *candidates.begin();
    } else {
      std::get<1>(key).assign(candidates.begin(), candidates.end());
      std::get<2>(key).assign(keepers.begin(), keepers.end());
    }
    TopicChunks& g = groups[key];
    g.topic = std::get<0>(key);
    g.candidates = std::get<1>(key);
    TopicSet all(g.nodes.begin(), g.nodes.end());
    all.insert(keepers.begin(), keepers.end());
    g.nodes.assign(all.begin(), all.end());
    ++g.chunks;
    g.bytes += chunk.chunk_size;
    ++(is_queued ? g.queued : g.held);
  }

  std::vector<TopicChunks> out;
  for (auto& [key, g] : groups) out.push_back(std::move(g));
  std::stable_sort(out.begin(), out.end(), [](const TopicChunks& a, const TopicChunks& b) {
    if (a.chunks != b.chunks) return a.chunks > b.chunks;
    return a.label() < b.label();
  });
  return out;
}

}  // namespace ferry::cli

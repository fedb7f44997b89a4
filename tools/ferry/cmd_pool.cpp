// ferry pool: the domain's loaned-memory pool, read from a read-only mapping
// of its segment: per size class total, free, loaned, in flight and the
// low-water mark, and the topics holding the most chunks (pool_topics.hpp
// says how chunks are attributed).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "commands.hpp"
#include "daemon_query.hpp"
#include "ferry/discovery/objects.hpp"
#include "ferry/transport/pool.hpp"
#include "format.hpp"
#include "pool_topics.hpp"
#include "queued_chunks.hpp"
#include "sample_codec.hpp"
#include "table.hpp"

namespace ferry::cli {

namespace {

constexpr std::size_t kHoldersShown = 5;
constexpr std::size_t kTopicsShown = 5;

struct Holder {
  const discovery::NodeInfo* node;
  transport::OwnerHoldings holdings;
};

// The topics a node publishes or subscribes to, each once, in that order.
std::vector<std::string> topic_names_of(const discovery::NodeInfo& n) {
  std::vector<std::string> out;
  auto add = [&](const std::string& t) {
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  };
  for (const auto& p : n.publishers) add(p.topic);
  for (const auto& p : n.subscribers) add(p.topic);
  return out;
}

Json topics_json(const std::vector<TopicChunks>& topics) {
  Json out = Json::array();
  for (const auto& t : topics) {
    Json entry{{"topic", t.topic.empty() ? Json(nullptr) : Json(t.topic)}};
    if (t.topic.empty()) entry["candidates"] = t.candidates;
    entry["chunks"] = t.chunks;
    entry["bytes"] = t.bytes;
    entry["queued"] = t.queued;
    entry["held"] = t.held;
    entry["nodes"] = t.nodes;
    out.push_back(std::move(entry));
  }
  return out;
}

void print_topics(const std::vector<TopicChunks>& topics) {
  if (topics.empty()) {
    std::printf("no topic holds a chunk: nothing is queued or held\n");
    return;
  }
  std::printf("topics holding the most chunks:\n");
  Table table({"TOPIC", "CHUNKS", "BYTES", "QUEUED", "HELD", "NODES"});
  for (std::size_t i = 0; i < topics.size() && i < kTopicsShown; ++i) {
    const auto& t = topics[i];
    table.add({t.label(), std::to_string(t.chunks), human_bytes(static_cast<double>(t.bytes)),
               std::to_string(t.queued), std::to_string(t.held),
               fmt::format("{}", fmt::join(t.nodes, ", "))});
  }
  std::fputs(table.render().c_str(), stdout);
  if (topics.size() > kTopicsShown) {
    std::printf("... and %zu more (ferry pool --json lists them all)\n",
                topics.size() - kTopicsShown);
  }
}

void pool(const Context& context, bool json) {
  auto client = connect_daemon(context);
  const std::string& domain = client.welcome().domain;
  const std::string name = discovery::pool_object_name(domain);
  auto segment =
      transport::Segment::open(name, discovery::kPoolKind, transport::kPoolLayoutVersion,
                               std::chrono::milliseconds(100), transport::SegmentAccess::ReadOnly);
  if (!segment) {
    if (segment.error() != transport::SegmentError::NotFound) {
      throw Failure(kExitRuntime, fmt::format("cannot read the pool '{}' of domain '{}': {}", name,
                                              domain, transport::to_string(segment.error())));
    }
    if (json) {
      std::printf("%s\n",
                  Json{{"pool", nullptr}, {"classes", Json::array()}, {"topics", Json::array()}}
                      .dump(2)
                      .c_str());
    } else {
      std::printf("domain '%s' has no loaned-memory pool (ferryd did not create one)\n",
                  domain.c_str());
    }
    return;
  }
  const transport::PoolStats stats =
      transport::read_pool_stats(segment->payload(), segment->payload_size());
  if (!stats.valid) {
    throw Failure(kExitRuntime,
                  fmt::format("'{}' is not a pool this ferry can read (another version?)", name));
  }

  // Who holds chunks: each node's pool owner id is its slot. holdings() and
  // live_chunks() only read the chunks' words, so a read-only mapping
  // serves. The rings are read first: a chunk taken between the two reads
  // is still found (held by its subscriber), one queued after is not yet.
  std::vector<Holder> holders;
  std::vector<TopicChunks> topics;
  const auto nodes = list_nodes(client);
  const auto topic_list = list_topics(client);
  const auto queued = queued_chunks(topic_list);
  if (auto view = transport::Pool::attach(segment->payload(), segment->payload_size())) {
    for (const auto& n : nodes) {
      if (n.slot == 0 || n.slot > 0xFFFF) continue;
      const auto h = view->holdings(static_cast<transport::NodeSlot>(n.slot));
      if (h.chunks > 0) holders.push_back({&n, h});
    }
    topics = chunks_by_topic(view->live_chunks(), queued, nodes, topic_list);
  }
  std::sort(holders.begin(), holders.end(),
            [](const Holder& a, const Holder& b) { return a.holdings.chunks > b.holdings.chunks; });
  if (holders.size() > kHoldersShown) holders.resize(kHoldersShown);

  if (json) {
    Json classes = Json::array();
    for (std::uint32_t c = 0; c < stats.class_count; ++c) {
      const auto& k = stats.classes[c];
      classes.push_back({{"chunk_size", k.chunk_size},
                         {"total", k.total},
                         {"free", k.free},
                         {"loaned", k.loaned},
                         {"in_flight", k.in_flight},
                         {"claiming", k.claiming},
                         {"low_water", k.low_water},
                         {"exhausted", k.exhausted},
                         {"fallbacks", k.fallbacks}});
    }
    Json top = Json::array();
    for (const auto& h : holders) {
      top.push_back({{"node", h.node->name},
                     {"pid", h.node->pid},
                     {"chunks", h.holdings.chunks},
                     {"held", h.holdings.held},
                     {"pending", h.holdings.pending},
                     {"topics", topic_names_of(*h.node)}});
    }
    const Json out{{"pool", name},
                   {"bytes", segment->total_size()},
                   {"classes", std::move(classes)},
                   {"topics", topics_json(topics)},
                   {"holders", std::move(top)},
                   {"rejected_refs", stats.invalid_refs + stats.stale_refs + stats.not_held},
                   {"reclaimed_refs", stats.reclaimed_refs},
                   // Holders of chunks held by more than 13 nodes (docs/design/pool.md).
                   {"holder_nodes",
                    {{"total", stats.holder_nodes},
                     {"free", stats.holder_nodes_free},
                     {"exhausted", stats.holder_nodes_exhausted},
                     {"refused_holders", stats.holder_overflow}}}};
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  std::printf("pool %s: %s, %u size class(es)\n", name.c_str(),
              human_bytes(static_cast<double>(segment->total_size())).c_str(), stats.class_count);
  Table table({"CHUNK", "TOTAL", "FREE", "LOANED", "IN_FLIGHT", "LOW_WATER", "EXHAUSTED"});
  for (std::uint32_t c = 0; c < stats.class_count; ++c) {
    const auto& k = stats.classes[c];
    table.add({human_bytes(static_cast<double>(k.chunk_size)), std::to_string(k.total),
               std::to_string(k.free), std::to_string(k.loaned), std::to_string(k.in_flight),
               std::to_string(k.low_water), std::to_string(k.exhausted)});
  }
  std::fputs(table.render().c_str(), stdout);
  // A chunk held by more than 13 nodes keeps the rest in overflow holder nodes.
  std::printf("holder nodes: %u free of %u", stats.holder_nodes_free, stats.holder_nodes);
  if (stats.holder_overflow > 0) {
    std::printf("; %llu holder(s) refused: a sample missed that many readers",
                static_cast<unsigned long long>(stats.holder_overflow));
  }
  std::printf("\n");
  print_topics(topics);
}

}  // namespace

int run_pool(const PoolOptions& o, const Context& context) {
  pool(context, o.json);
  return kExitOk;
}

}  // namespace ferry::cli

// Registry: a new configuration on SIGHUP, checked against the live ports.
#include <fmt/format.h>

#include "registry.hpp"

namespace ferry::discovery {

namespace {

std::string type_text(const ServedTopic& t) {
  if (t.bytes) return fmt::format("bytes of at most {} bytes", t.config.max_size);
  if (t.type_layout.empty() || t.type_layout.size() > 200) {
    return fmt::format("'{}' ({} bytes, alignment {})", t.type_name, t.type_size, t.type_align);
  }
  return fmt::format("'{}' ({} bytes, alignment {}, layout {})", t.type_name, t.type_size,
                     t.type_align, t.type_layout);
}

const char* policy_text(Policy p) {
  switch (p) {
    case Policy::Block:
      return "block";
    case Policy::DropNew:
      return "drop_new";
    case Policy::DropOldest:
      break;
  }
  return "drop_oldest";
}

}  // namespace

std::optional<Registry::ReloadConflict> Registry::reload_conflict(
    const std::vector<ServedTopic>& declared) const {
  for (const ServedTopic& next : declared) {
    auto it = topics_.find(next.name);
    if (it == topics_.end()) continue;
    const TopicEntry& live = it->second;
    const std::size_t ports = live.publishers.size() + live.subscribers.size();
    if (ports == 0) continue;
    const ServedTopic& now = live.settings;
    // An undeclared topic with ports has the type of its first port.
    // Fields reordered at the same size are another type too: live ports
    // would read each other's samples wrongly.
    const bool same_layout = now.type_layout.empty() || now.type_layout == next.type_layout;
    const bool same_type = now.type_name == next.type_name && now.type_size == next.type_size &&
                           now.type_align == next.type_align && same_layout;
    const bool same_sizes =
        !now.declared || (now.bytes == next.bytes && now.config.max_size == next.config.max_size);
    if (!same_type || !same_sizes) {
      return ReloadConflict{next.name, fmt::format("has {} live port(s) of type {}; the new "
                                                   "configuration gives it {}",
                                                   ports, type_text(now), type_text(next))};
    }
    if (now.config.capacity != next.config.capacity) {
      return ReloadConflict{next.name,
                            fmt::format("has {} live port(s) whose queues hold {} samples; the "
                                        "new configuration asks capacity {}",
                                        ports, now.config.capacity, next.config.capacity)};
    }
    if (now.config.policy != next.config.policy) {
      return ReloadConflict{next.name, fmt::format("has {} live port(s) with policy {}; the new "
                                                   "configuration asks {}",
                                                   ports, policy_text(now.config.policy),
                                                   policy_text(next.config.policy))};
    }
  }
  return std::nullopt;
}

void Registry::reload(std::vector<ServedTopic> declared, TopicConfig defaults, bool strict) {
  defaults_ = defaults;
  strict_ = strict;
  std::map<std::string, TopicEntry> next;
  for (auto& t : declared) {
    t.declared = true;
    t.config.slot_size = slot_size_for(t.config);
    TopicEntry entry{std::move(t), {}, {}};
    if (auto it = topics_.find(entry.settings.name); it != topics_.end()) {
      entry.publishers = std::move(it->second.publishers);
      entry.subscribers = std::move(it->second.subscribers);
      topics_.erase(it);
    }
    std::string name = entry.settings.name;
    next.emplace(std::move(name), std::move(entry));
  }
  // No longer declared: kept while ports use it, as an undeclared topic
  // (removed with its last port); gone at once otherwise.
  for (auto& [name, entry] : topics_) {
    if (entry.publishers.empty() && entry.subscribers.empty()) continue;
    entry.settings.declared = false;
    next.emplace(name, std::move(entry));
  }
  topics_ = std::move(next);
}

}  // namespace ferry::discovery

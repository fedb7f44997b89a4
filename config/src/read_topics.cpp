// `defaults:` and `topics:`.

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ferry/config/limits.hpp"
#include "ferry/config/names.hpp"
#include "ferry/config/service.hpp"
#include "ferry/config/units.hpp"
#include "readers.hpp"
#include "suggest.hpp"

namespace ferry::config::detail {

namespace {
bool is_power_of_two(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

std::uint32_t narrow(std::uint64_t v) { return static_cast<std::uint32_t>(v); }

// Range first (the integer reader's message), then the power of two with
// the two nearest valid values as a hint.
void read_capacity(Reader& reader, const Entry& e, TopicSettings& settings) {
  const auto value = reader.integer(e, 1, kMaxCapacity);
  if (!value) return;
  if (!is_power_of_two(*value)) {
    std::uint64_t below = 1;
    while (below * 2 < *value) below *= 2;
    reader.error(e.value_pos, "capacity " + std::to_string(*value) +
                                  " is not a power of two; expected a power of two from 1 to " +
                                  std::to_string(kMaxCapacity) + " (e.g. " + std::to_string(below) +
                                  " or " + std::to_string(below * 2) + ")");
    return;
  }
  settings.capacity = narrow(*value);
}

const std::vector<std::string_view> kAllowKeys{"publish", "subscribe"};

Allow read_allow(Reader& reader, const Entry& e, std::string_view where) {
  Allow allow;
  if (!reader.expect_map(e.value, e.value_pos, "'allow'",
                         "{ publish: [alice], subscribe: [robots] }"))
    return allow;
  for (const Entry& list :
       reader.entries(e.value, "in 'allow' " + std::string(where), kAllowKeys)) {
    auto names = reader.string_list(list);
    if (list.key == "publish") allow.publish = std::move(names);
    if (list.key == "subscribe") allow.subscribe = std::move(names);
  }
  return allow;
}

std::vector<std::string_view> topic_keys() {
  std::vector<std::string_view> keys{"name", "type"};
  keys.insert(keys.end(), kSettingKeys.begin(), kSettingKeys.end());
  keys.insert(keys.end(), {"max_size", "allow"});
  return keys;
}

constexpr std::string_view kTopicExample = "{ name: robot/pose, type: Pose }";

class TopicReader {
 public:
  TopicReader(Reader& reader, const TopicContext& context) : r_(reader), c_(context) {}

  std::vector<Topic> read(const Entry& topics) {
    std::vector<Topic> out;
    if (!r_.expect_list(topics.value, topics.value_pos, "'topics'",
                        "[" + std::string(kTopicExample) + "]"))
      return out;
    std::size_t index = 0;
    for (const YAML::Node& item : topics.value) {
      ++index;
      const SourcePos pos = item.IsNull() ? topics.value_pos : pos_of(item);
      if (!r_.expect_map(item, pos, "topic " + std::to_string(index), kTopicExample)) continue;
      if (auto topic = read_topic(item, pos, index)) out.push_back(std::move(*topic));
    }
    return out;
  }

 private:
  std::optional<Topic> read_topic(const YAML::Node& item, SourcePos pos, std::size_t index) {
    const std::size_t errors = r_.error_count();
    // The name (when readable) makes every later message about this topic clearer.
    std::string label = "topic " + std::to_string(index);
    for (auto it = item.begin(); it != item.end(); ++it) {
      if (it->first.IsScalar() && it->first.Scalar() == "name" && it->second.IsScalar()) {
        label = "topic " + quote(it->second.Scalar());
        break;
      }
    }
    Topic topic;
    topic.pos = pos;
    topic.settings = c_.defaults;
    SettingsPositions positions;
    const Entry* name = nullptr;
    const Entry* type = nullptr;
    const Entry* max_size = nullptr;
    const auto entries = r_.entries(item, "in " + label, kTopicKeys);
    for (const Entry& e : entries) {
      if (read_setting(r_, e, topic.settings, positions)) continue;
      if (e.key == "name") name = &e;
      if (e.key == "type") type = &e;
      if (e.key == "max_size") max_size = &e;
      if (e.key == "allow") topic.allow = read_allow(r_, e, "of " + label);
    }
    check_history(r_, topic.settings, positions, pos);
    if (!name) {
      r_.error(pos, label + " has no 'name'; expected e.g. name: robot/pose");
    } else if (auto text = r_.string(*name)) {
      topic.name = *text;
      check_name(topic.name, name->value_pos);
    }
    if (!type) {
      r_.error(pos, label + " has no 'type'; expected a type declared under 'types', or 'bytes'");
    } else if (auto text = r_.string(*type)) {
      topic.type = *text;
      resolve_type(topic, label, *type, max_size);
    }
    if (r_.error_count() != errors) return std::nullopt;
    return topic;
  }

  void check_name(const std::string& name, SourcePos pos) {
    if (!is_valid_topic_name(name)) {
      r_.error(pos, "invalid topic name " + quote(name) + "; expected 1 to " +
                        std::to_string(kMaxTopicNameLength) +
                        " characters of A-Z a-z 0-9 _ / . -, without a leading, trailing or "
                        "double '/'");
      return;
    }
    if (name.starts_with(kServicePrefix)) {
      r_.error(pos, "topic name " + quote(name) + " starts with '" + std::string(kServicePrefix) +
                        "', which is kept for the topics that carry services; expected another "
                        "name");
      return;
    }
    const auto [it, inserted] = seen_.emplace(name, pos);
    if (!inserted)
      r_.error(pos,
               "duplicate topic " + quote(name) + "; first declared at " + to_string(it->second));
  }

  // Sets type_index, sample size and alignment; checks max_size and the pool.
  void resolve_type(Topic& topic, const std::string& label, const Entry& type,
                    const Entry* max_size) {
    SourcePos size_pos = type.value_pos;
    if (topic.is_bytes()) {
      if (!max_size) {
        r_.error(type.value_pos,
                 "bytes " + label + " has no 'max_size'; expected e.g. max_size: 64KiB");
        return;
      }
      const auto bytes = r_.size(*max_size, 1, kMaxSampleSize);
      if (!bytes) return;
      topic.sample_size = *bytes;
      topic.sample_align = 1;
      size_pos = max_size->value_pos;
    } else {
      if (max_size)
        r_.error(max_size->key_pos, "'max_size' is only for bytes topics, and " + label +
                                        " has type " + quote(topic.type) +
                                        "; expected no 'max_size' (the type fixes the size), or "
                                        "type: bytes");
      const auto index = c_.schema.index_of(topic.type);
      if (!index) {
        report_undeclared(topic, label, type.value_pos);
        return;
      }
      const Type& t = c_.schema.type(*index);
      topic.type_index = index;
      topic.sample_size = t.size;
      topic.sample_align = t.align;
    }
    check_pool(topic, label, size_pos);
  }

  void report_undeclared(const Topic& topic, const std::string& label, SourcePos pos) {
    if (declared_.empty())
      for (const TypeDecl& d : c_.decls) declared_.insert(d.name);
    // Declared but broken: already reported where it is declared.
    if (declared_.contains(topic.type)) return;
    if (!r_.suggestions().exhausted() && candidates_.empty()) {
      candidates_.push_back(kBytesType);
      for (const TypeDecl& d : c_.decls) candidates_.push_back(d.name);
    }
    std::string message = "undeclared type " + quote(topic.type) + " for " + label;
    if (const auto guess = r_.suggestions().closest(topic.type, candidates_)) {
      message += "; did you mean " + quote(*guess) + "?";
    } else {
      message += "; expected a type declared under 'types', or 'bytes'";
    }
    r_.error(pos, std::move(message));
  }

  // Samples above kMaxInlineSample travel through the pool: when `pool:` is
  // given, one of its classes must hold them.
  void check_pool(const Topic& topic, const std::string& label, SourcePos pos) {
    if (c_.pool.empty() || topic.sample_size <= kMaxInlineSample) return;
    const std::uint64_t largest = std::ranges::max(c_.pool, {}, &PoolClass::chunk_size).chunk_size;
    if (largest >= topic.sample_size) return;
    r_.error(pos, "the " + std::to_string(topic.sample_size) + "-byte samples of " + label +
                      " are larger than every pool size class (largest " + format_size(largest) +
                      "); expected a pool class with chunk_size of at least " +
                      std::to_string(topic.sample_size) + " bytes");
  }

  inline static const std::vector<std::string_view> kTopicKeys = topic_keys();

  Reader& r_;
  const TopicContext& c_;
  std::unordered_map<std::string, SourcePos> seen_;
  // Built on first use: declared type names, and "did you mean" candidates.
  std::unordered_set<std::string_view> declared_;
  std::vector<std::string_view> candidates_;
};
}  // namespace

bool read_setting(Reader& reader, const Entry& e, TopicSettings& settings,
                  SettingsPositions& positions) {
  if (e.key == "capacity") {
    read_capacity(reader, e, settings);
    positions.capacity = e.value_pos;
  } else if (e.key == "policy") {
    settings.policy = reader.policy(e).value_or(settings.policy);
  } else if (e.key == "block_timeout_ms") {
    settings.block_timeout_ms =
        narrow(reader.integer(e, 0, kMaxMillis).value_or(settings.block_timeout_ms));
  } else if (e.key == "max_publishers") {
    settings.max_publishers =
        narrow(reader.integer(e, 1, kMaxPublishers).value_or(settings.max_publishers));
  } else if (e.key == "max_subscribers") {
    settings.max_subscribers =
        narrow(reader.integer(e, 1, kMaxSubscribers).value_or(settings.max_subscribers));
  } else if (e.key == "max_loans") {
    settings.max_loans = narrow(reader.integer(e, 1, kMaxLoans).value_or(settings.max_loans));
  } else if (e.key == "max_held") {
    settings.max_held = narrow(reader.integer(e, 1, kMaxHeld).value_or(settings.max_held));
  } else if (e.key == "history") {
    settings.history = narrow(reader.integer(e, 0, kMaxCapacity).value_or(settings.history));
    positions.history = e.value_pos;
  } else {
    return false;
  }
  return true;
}

// A late subscriber's history goes into its queue, so it cannot exceed the
// queue's capacity.
void check_history(Reader& reader, const TopicSettings& settings,
                   const SettingsPositions& positions, SourcePos fallback) {
  if (settings.history <= settings.capacity) return;
  if (!positions.history && !positions.capacity) return;  // both inherited: reported in defaults
  const SourcePos pos = positions.history.value_or(positions.capacity.value_or(fallback));
  reader.error(pos, "history " + std::to_string(settings.history) + " is larger than capacity " +
                        std::to_string(settings.capacity) +
                        "; expected a history of at most the capacity (late subscribers get it "
                        "in their queue)");
}

TopicSettings read_defaults(Reader& reader, const Entry& defaults) {
  TopicSettings settings;
  if (!reader.expect_map(defaults.value, defaults.value_pos, "'defaults'",
                         "{ capacity: 64, policy: drop_oldest }"))
    return settings;
  SettingsPositions positions;
  for (const Entry& e : reader.entries(defaults.value, "in 'defaults'", kSettingKeys))
    read_setting(reader, e, settings, positions);
  check_history(reader, settings, positions, defaults.value_pos);
  return settings;
}

std::vector<Topic> read_topics(Reader& reader, const Entry& topics, const TopicContext& context) {
  return TopicReader(reader, context).read(topics);
}

}  // namespace ferry::config::detail

#include "topic_pump.hpp"

#include <fmt/format.h>
#include <fnmatch.h>
#include <spdlog/spdlog.h>

#include <array>
#include <cstring>

#include "ferry/config/cdr.hpp"

namespace ferry::foxglove {

namespace {

// Samples taken from one channel before the next channel's turn.
constexpr std::size_t kPerRound = 16;
// The longest sleep of an idle taking thread (every wake-up it needs comes
// through the WaitSet: this is a safety net only).
constexpr std::chrono::seconds kIdleWait{5};

// The encoded payload of `sample`: one copy from the pool chunk. A type
// whose CDR form is its own bytes after a short prefix (the header, a bytes
// sample's length) is copied as one block; any other is encoded field by
// field, also straight into the payload.
std::shared_ptr<const Payload> encode_sample(const TopicCoding& coding,
                                             std::span<const std::byte> sample) {
  const cli::ChannelLayout& layout = coding.layout;
  auto payload = std::make_shared<Payload>(cli::cdr_size(coding.config->schema, layout, sample));
  std::array<std::byte, cli::kMaxCdrImagePrefix> prefix{};
  const std::size_t prefix_size = cli::cdr_image_prefix(layout, sample.size(), prefix);
  std::span<std::byte> out = payload->bytes();
  if (prefix_size != 0 && prefix_size + sample.size() == out.size()) {
    std::memcpy(out.data(), prefix.data(), prefix_size);
    if (!sample.empty()) std::memcpy(out.data() + prefix_size, sample.data(), sample.size());
  } else {
    cli::encode(coding.config->schema, layout, sample, out);
  }
  return payload;
}

}  // namespace

TopicPump::TopicPump(Node& node, const Options& options, const DomainQueries& queries,
                     EventHandoff& out)
    : node_(node),
      options_(options),
      queries_(queries),
      out_(out),
      config_(std::make_shared<const config::Config>(queries.fetch_config())) {}

bool TopicPump::shown(const discovery::TopicInfo& topic, const config::Config& config) const {
  if (topic.type_name.empty()) return false;  // no type yet: nothing to describe
  if (!options_.topics.empty()) {
    bool match = false;
    for (const auto& glob : options_.topics)
      match = match || fnmatch(glob.c_str(), topic.name.c_str(), 0) == 0;
    if (!match) return false;
  }
  // A declared topic is always there; an undeclared one while a port that
  // is not this server's (nor another ferry foxglove's) uses it: the
  // observer and the clientPublish publishers this server keeps on it do
  // not keep it in the list after its programs left.
  if (config.find_topic(topic.name) != nullptr) return true;
  const auto foreign = [this](const discovery::PortInfo& p) {
    return p.node != options_.node_name;
  };
  return std::any_of(topic.publishers.begin(), topic.publishers.end(), foreign) ||
         std::any_of(topic.subscribers.begin(), topic.subscribers.end(), foreign);
}

void TopicPump::refresh_config(const std::vector<discovery::TopicInfo>& topics) {
  bool refetch = false;
  for (const auto& t : topics) {
    if (t.type_name.empty() || t.type_name == config::kBytesType) continue;
    if (config_->schema.find(t.type_name) != nullptr) continue;
    // Once per type name: an undeclared C++ type is never in any configuration.
    if (config_refetched_for_.insert(t.type_name).second) refetch = true;
  }
  if (!refetch) return;
  config_ = std::make_shared<const config::Config>(queries_.fetch_config());
}

ChannelId TopicPump::channel_id_for(const std::string& topic, const TopicCoding& coding) {
  // The protocol lets a channel that comes back keep its id only when its
  // topic, schema name and schema are the same.
  const auto old = retired_.find(topic);
  if (old != retired_.end() && old->second.schema_name == coding.layout.schema_name &&
      old->second.schema == coding.layout.definition)
    return old->second.id;
  return next_id_++;
}

void TopicPump::poll() {
  std::vector<discovery::TopicInfo> topics;
  try {
    topics = queries_.list_topics();
    refresh_config(topics);
    if (std::exchange(poll_failed_, false)) spdlog::info("foxglove: ferryd answers again");
  } catch (const std::exception& e) {
    if (!std::exchange(poll_failed_, true))
      spdlog::warn(
          "foxglove: cannot list the domain's topics ({}); the channels stay as they "
          "are and the list is asked again every {} ms",
          e.what(), options_.poll_topics.count());
    return;
  }
  {
    std::lock_guard lock(mutex_);
    offered_ = Offered{std::move(topics), config_};
  }
  wait_set_.notify();
}

void TopicPump::run_poller() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (stop_cv_.wait_for(lock, options_.poll_topics, [this] { return stopping_; })) break;
    lock.unlock();
    poll();
    lock.lock();
  }
}

void TopicPump::apply_offered() {
  std::optional<Offered> offered;
  {
    std::lock_guard lock(mutex_);
    offered.swap(offered_);
  }
  if (!offered) return;
  const std::vector<discovery::TopicInfo>& topics = offered->topics;
  const std::shared_ptr<const config::Config>& config = offered->config;
  std::set<std::string> present;
  for (const auto& t : topics) {
    if (!shown(t, *config)) continue;
    auto known = topics_.find(t.name);
    if (known != topics_.end()) {
      // Same type: the same channel. Another type (the topic went and came
      // back between two polls): removed below, a new channel at the next poll.
      if (known->second.type_name == t.type_name && known->second.sample_size == t.sample_size)
        present.insert(t.name);
      continue;
    }
    cli::ChannelLayout layout = cli::channel_layout(*config, t);
    auto coding = std::make_shared<const TopicCoding>(TopicCoding{config, std::move(layout)});
    const ChannelId id = channel_id_for(t.name, *coding);
    ChannelDescription description{id, t.name, coding->layout.schema_name,
                                   coding->layout.definition};
    batch_bytes_ += description.schema.size();
    batch_.emplace_back(ChannelAdded{std::move(description), coding});
    Known& k = topics_[t.name];
    k.id = id;
    k.coding = std::move(coding);
    k.type_name = t.type_name;
    k.sample_size = t.sample_size;
    present.insert(t.name);
    spdlog::info("foxglove: channel {} is topic '{}' ({})", id, t.name,
                 topics_.at(t.name).coding->layout.schema_name);
  }
  for (auto it = topics_.begin(); it != topics_.end();) {
    if (present.contains(it->first)) {
      ++it;
      continue;
    }
    unsubscribe(it->second);
    const cli::ChannelLayout& layout = it->second.coding->layout;
    retired_[it->first] =
        ChannelDescription{it->second.id, it->first, layout.schema_name, layout.definition};
    batch_.emplace_back(ChannelRemoved{it->second.id});
    spdlog::info("foxglove: topic '{}' went away (channel {})", it->first, it->second.id);
    it = topics_.erase(it);
  }
  flush();
}

void TopicPump::want(std::set<ChannelId> channels) {
  {
    std::lock_guard lock(mutex_);
    wanted_ = std::move(channels);
    wanted_changed_ = true;
  }
  wait_set_.notify();
}

void TopicPump::stop() {
  // SYNC: relaxed; a flag only, seen after notify() wakes the wait (the
  // WaitSet's own synchronisation), or at the next poll.
  stop_.store(true, std::memory_order_relaxed);
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  wait_set_.notify();
  out_.close();
}

void TopicPump::unsubscribe(Known& k) {
  if (!k.subscriber) return;
  wait_set_.detach(*k.subscriber);
  k.subscriber.reset();
  --streamed_;
}

void TopicPump::reconcile() {
  std::set<ChannelId> wanted;
  {
    std::lock_guard lock(mutex_);
    if (!wanted_changed_) return;
    wanted_changed_ = false;
    wanted = wanted_;
  }
  for (auto& [name, k] : topics_) {
    if (!wanted.contains(k.id)) {
      unsubscribe(k);
      k.failed = false;  // a later subscription tries again
      continue;
    }
    if (k.subscriber || k.failed) continue;
    std::string why;
    if (streamed_ >= kMaxStreamed) {
      why = fmt::format(
          "topic '{}' cannot be streamed: ferry foxglove streams at most {} topics "
          "at once",
          name, kMaxStreamed);
    } else {
      try {
        k.subscriber.emplace(node_.raw_subscriber(name, SubscriberOptions{.observer = true}));
        wait_set_.attach(*k.subscriber);
        ++streamed_;
        spdlog::info("foxglove: streaming topic '{}' (channel {})", name, k.id);
      } catch (const std::exception& e) {
        k.subscriber.reset();
        why = fmt::format("cannot subscribe to topic '{}': {}", name, e.what());
      }
    }
    if (!why.empty()) {
      k.failed = true;
      spdlog::warn("foxglove: {}", why);
      batch_.emplace_back(SubscribeFailed{k.id, std::move(why)});
    }
  }
  flush();
}

bool TopicPump::take_round() {
  bool took = false;
  for (auto& [name, k] : topics_) {
    if (!k.subscriber) continue;
    for (std::size_t i = 0; i < kPerRound; ++i) {
      if (batch_bytes_ != 0 && out_.full()) return took;
      auto sample = k.subscriber->take();
      if (!sample) break;
      took = true;
      try {
        auto payload = encode_sample(*k.coding, sample->bytes());
        batch_bytes_ += payload->size();
        batch_.emplace_back(OutMessage{k.id, sample->info().publish_time_ns, std::move(payload)});
      } catch (const config::CdrError& e) {
        if (!std::exchange(k.bad_sample_logged, true))
          spdlog::warn(
              "foxglove: topic '{}': a sample could not be encoded ({}); such samples "
              "are skipped",
              name, e.what());
      }
    }
  }
  return took;
}

void TopicPump::flush() {
  out_.push(batch_, batch_bytes_);
  batch_bytes_ = 0;
}

void TopicPump::run() {
  // SYNC: relaxed; see stop().
  while (!stop_.load(std::memory_order_relaxed)) {
    apply_offered();
    reconcile();
    const bool took = take_round();
    flush();
    if (out_.full()) {
      // The I/O thread is behind: samples wait in ferry's queues meanwhile.
      out_.wait_for_room(std::chrono::milliseconds(20));
      continue;
    }
    if (took) continue;
    // Woken by a sample, by want(), by a topic list offered, or by stop().
    (void)wait_set_.wait(kIdleWait);
  }
  for (auto& [name, k] : topics_) unsubscribe(k);
}

}  // namespace ferry::foxglove

#include "recorder.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <span>

#include "cli_context.hpp"
#include "ferry/config/cdr.hpp"

namespace ferry::cli {

namespace {
// From this size on a sample that is its own CDR form is written from
// where it lies (a chunk of its own); smaller ones are cheaper to copy into
// the open chunk than to give their own chunk and write(). The same size
// splits what the taking thread hands over: a sample from it on stays held
// in its chunk (max_held bounds them; waiting for room costs a wake-up,
// cheap per frame), a smaller one is copied into the arena and released.
constexpr std::size_t kWriteInPlaceFrom = 64 * 1024;
// Room for every topic's max_held held samples, an AddChannel each and a
// Flush; copied samples are bounded by the room left and the arena's.
constexpr std::size_t kQueueCapacity =
    Recorder::kMaxTopics * (detail::HeldSamples::kMaxBuffers + 1) + 1;
// The copied samples' bytes: at least 256 of the largest (64 KiB), and the
// queue's worth of small ones.
constexpr std::size_t kArenaBytes = std::size_t{16} << 20;
// While the writer holds max_held samples of a topic (whose queue is then
// ready, so WaitSet::wait would return at once), the other topics are
// polled this often.
constexpr std::chrono::milliseconds kBlockedPoll{1};
}  // namespace

Recorder::Recorder(Node& node, const config::Config& config, bag::McapWriter& writer, bool observe)
    : node_(node),
      config_(config),
      writer_(writer),
      observe_(observe),
      queue_(kQueueCapacity),
      arena_(kArenaBytes) {
  writer_thread_ = std::thread([this] { write_loop(); });
}

Recorder::~Recorder() {
  if (!writer_thread_.joinable()) return;
  queue_.close();
  writer_thread_.join();
}

void Recorder::add(const discovery::TopicInfo& topic) {
  if (topics_.size() >= kMaxTopics)
    throw Failure(kExitUsage, fmt::format("cannot record topic '{}': ferry record takes at most "
                                          "{} topics",
                                          topic.name, kMaxTopics));
  // The channel goes into the writer's queue first. Copied small samples
  // can fill it while the writer is behind (its write() blocked on a slow
  // disk or pipe): back-pressure, as take() applies, until the writer frees
  // an entry (it always does, unless it failed: rethrow_if_failed() says
  // so). Before subscribing: a port nobody takes from would make a `block`
  // topic's publishers wait meanwhile.
  while (queue_.room() == 0) {
    rethrow_if_failed();
    queue_.wait_for_pop(kBlockedPoll);
  }
  ChannelLayout layout = channel_layout(config_, topic);
  bag::StringMap metadata = {{"ferry_type", topic.type_name},
                             {"policy", std::string(discovery::to_string(topic.policy))},
                             {"capacity", std::to_string(topic.capacity)}};
  auto subscriber = node_.raw_subscriber(topic.name, SubscriberOptions{.observer = observe_});
  // As the port counts it: the topic's max_held from the configuration
  // ferryd serves (`defaults:` for a topic no configuration declares).
  const config::Topic* declared = config_.find_topic(topic.name);
  const std::uint32_t max_held = std::clamp<std::uint32_t>(
      declared != nullptr ? declared->settings.max_held : config_.defaults.max_held, 1,
      detail::HeldSamples::kMaxBuffers);
  std::unique_ptr<RecordedTopic> recorded(new RecordedTopic{.name = topic.name,
                                                            .layout = std::move(layout),
                                                            .channel_metadata = std::move(metadata),
                                                            .max_held = max_held,
                                                            .subscriber = std::move(subscriber)});
  wait_set_.attach(recorded->subscriber);
  RecordedTopic& added = *topics_.emplace_back(std::move(recorded));
  // Before any of its samples: the queue keeps the order.
  RecordJob& job = queue_.back(0);
  job.kind = RecordJob::Kind::AddChannel;
  job.topic = &added;
  queue_.push(1);
}

bool Recorder::has(const std::string& topic) const {
  return std::any_of(topics_.begin(), topics_.end(),
                     [&](const auto& t) { return t->name == topic; });
}

bool Recorder::take_one(RecordedTopic& topic, RecordJob& job) {
  // SYNC: acquire, pairs with the release decrement in write_loop(): the
  // writer released that sample's buffer before, so take() finds it free.
  if (topic.in_flight.load(std::memory_order_acquire) >= topic.max_held) {
    blocked_ = true;
    return false;
  }
  auto sample = topic.subscriber.take();
  if (!sample) return false;
  // Copied when small and the arena has room; else held like a large one
  // (max_held allowed one more above).
  std::byte* const copy =
      sample->size() < kWriteInPlaceFrom ? arena_.allocate(sample->size(), job.copy_end) : nullptr;
  const SampleMeta meta = topic.meta(*sample);
  topic.gaps.taken(meta.publisher_id, meta.sequence);
  job.kind = RecordJob::Kind::Sample;
  job.topic = &topic;
  job.meta = meta;
  job.log_time = realtime_ns();
  if (copy != nullptr) {
    std::memcpy(copy, sample->data(), sample->size());
    job.copy = copy;
    job.copy_size = static_cast<std::uint32_t>(sample->size());
  } else {
    job.copy = nullptr;
    job.sample = std::move(sample);
    // SYNC: relaxed; only this thread increments, and the queue's mutex
    // hands the job (and what it counts) to the writer.
    topic.in_flight.fetch_add(1, std::memory_order_relaxed);
  }
  return true;
}

std::uint64_t Recorder::take(std::uint64_t limit) {
  rethrow_if_failed();
  // A few samples per topic per round, so that a busy topic cannot starve
  // the others of their turn before their queues overflow.
  constexpr std::size_t kPerRound = 16;
  // Taken samples go to the writer at the end, or this many at a time: one
  // lock (and at most one wake-up of the writer) per batch.
  constexpr std::size_t kHandOverEvery = 256;
  blocked_ = false;
  std::size_t room = queue_.room();
  std::size_t pending = 0;  // filled slots not handed over yet
  const auto hand_over = [&] {
    queue_.push(pending);
    pending = 0;
    room = queue_.room();
  };
  std::uint64_t taken = 0;
  bool any = true;
  while (any && taken < limit) {
    any = false;
    for (auto& topic : topics_) {
      for (std::size_t i = 0; i < kPerRound && taken < limit; ++i) {
        if (pending == room || pending == kHandOverEvery) hand_over();
        if (room == 0) {
          // Copied samples filled it: the writer is behind.
          blocked_ = true;
          return taken;
        }
        if (!take_one(*topic, queue_.back(pending))) break;
        ++pending;
        ++taken;
        any = true;
      }
    }
  }
  queue_.push(pending);
  return taken;
}

void Recorder::wait(std::chrono::nanoseconds timeout) {
  rethrow_if_failed();
  if (blocked_)
    queue_.wait_for_pop(std::min<std::chrono::nanoseconds>(timeout, kBlockedPoll));
  else
    (void)wait_set_.wait(timeout);
}

void Recorder::flush() {
  // SYNC: acquire, pairs with the release store in write_loop() after the
  // flush (nothing else is ordered by it).
  if (flush_queued_.load(std::memory_order_acquire)) return;
  if (queue_.room() == 0) return;  // the writer is behind: it writes chunks anyway
  // SYNC: relaxed; the queue's mutex orders it before the job reaches the writer.
  flush_queued_.store(true, std::memory_order_relaxed);
  queue_.back(0).kind = RecordJob::Kind::Flush;
  queue_.push(1);
}

void Recorder::finish() {
  if (writer_thread_.joinable()) {
    queue_.close();
    writer_thread_.join();  // what the writer did happens before what follows
  }
  rethrow_if_failed();
}

void Recorder::rethrow_if_failed() {
  // SYNC: acquire, pairs with the release store in write_loop(): error_ is set.
  if (failed_.load(std::memory_order_acquire)) std::rethrow_exception(error_);
}

void Recorder::write_loop() {
  // Ctrl-C is for the taking thread (interrupt.hpp), whose wait it cuts short.
  sigset_t interrupts;
  sigemptyset(&interrupts);
  sigaddset(&interrupts, SIGINT);
  sigaddset(&interrupts, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &interrupts, nullptr);
  // Done entries go back to the taking thread after a held sample (whose
  // room it may wait for) or this many, else one lock per entry.
  constexpr std::size_t kPopBatch = 64;
  try {
    while (std::size_t queued = queue_.wait_front()) {
      std::size_t done = 0;
      while (done < queued) {
        RecordJob& job = queue_.front(done++);
        bool released = false;
        switch (job.kind) {
          case RecordJob::Kind::AddChannel:
            add_channel(*job.topic);
            break;
          case RecordJob::Kind::Flush:
            writer_.flush_chunk();
            // SYNC: release, pairs with the acquire load in flush().
            flush_queued_.store(false, std::memory_order_release);
            break;
          case RecordJob::Kind::Sample:
            write_sample(job);
            if (job.copy != nullptr) {
              arena_.give_back(job.copy_end);
              job.copy = nullptr;
            }
            if (job.sample) {
              // Back to the pool at once: the publisher may need the chunk.
              job.sample.reset();
              // SYNC: release, pairs with the acquire load in take_one().
              job.topic->in_flight.fetch_sub(1, std::memory_order_release);
              released = true;
            }
            break;
        }
        if (released || done == kPopBatch) {
          queue_.pop(done);
          queued -= done;
          done = 0;
        }
      }
      queue_.pop(done);
    }
  } catch (...) {
    // Stop writing: the taking thread rethrows it on its next call; what is
    // still queued is released when the queue goes.
    error_ = std::current_exception();
    // SYNC: release, pairs with the acquire load in rethrow_if_failed().
    failed_.store(true, std::memory_order_release);
    wait_set_.notify();
  }
}

void Recorder::add_channel(RecordedTopic& topic) {
  const ChannelLayout& layout = topic.layout;
  auto found = std::find_if(schemas_.begin(), schemas_.end(),
                            [&](const auto& s) { return s.first == layout.schema_name; });
  if (found == schemas_.end()) {
    const auto id = writer_.add_schema(layout.schema_name, "ros2msg",
                                       std::as_bytes(std::span(layout.definition)));
    found = schemas_.emplace(schemas_.end(), layout.schema_name, id);
  }
  topic.channel = writer_.add_channel(found->second, topic.name, "cdr", topic.channel_metadata);
}

void Recorder::write_sample(RecordJob& job) {
  RecordedTopic& topic = *job.topic;
  const std::span<const std::byte> bytes = job.bytes();
  std::uint64_t size = 0;
  try {
    size = cdr_size(config_.schema, topic.layout, bytes);
  } catch (const config::CdrError& e) {
    if (topic.bad_samples++ == 0)
      spdlog::warn(
          "record: topic '{}': a sample was not written ({}); such samples are counted "
          "in the file's metadata",
          topic.name, e.what());
    return;
  }
  // MCAP's sequence is 32 bits: the low half of ferry's.
  const bag::MessageHeader header{topic.channel, static_cast<std::uint32_t>(job.meta.sequence),
                                  job.log_time, job.meta.publish_time_ns};
  std::array<std::byte, kMaxCdrImagePrefix> prefix{};
  const std::size_t prefix_size = bytes.size() >= kWriteInPlaceFrom && size > bytes.size()
                                      ? cdr_image_prefix(topic.layout, bytes.size(), prefix)
                                      : 0;
  if (prefix_size != 0 && prefix_size + bytes.size() == size) {
    // A large sample that is its own CDR form: from the pool to the file in
    // the one copy write() makes.
    writer_.write_message(header, std::span<const std::byte>(prefix).first(prefix_size), bytes);
  } else {
    encode(config_.schema, topic.layout, bytes, writer_.reserve_message(header, size));
  }
  ++topic.messages;
  topic.bytes += size;
}

void Recorder::write_metadata() {
  bag::StringMap metadata;
  std::uint64_t missed = 0;
  for (const auto& t : topics_) {
    metadata.emplace_back("messages:" + t->name, std::to_string(t->messages));
    metadata.emplace_back("missed:" + t->name, std::to_string(t->gaps.missed()));
    if (t->bad_samples != 0)
      metadata.emplace_back("bad_samples:" + t->name, std::to_string(t->bad_samples));
    if (t->gaps.missed() != 0)
      metadata.emplace_back("missed_ranges:" + t->name, t->gaps.describe());
    missed += t->gaps.missed();
  }
  metadata.emplace_back("missed", std::to_string(missed));
  writer_.add_metadata("ferry.record", std::move(metadata));
}

}  // namespace ferry::cli

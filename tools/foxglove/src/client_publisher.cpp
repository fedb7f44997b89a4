#include "client_publisher.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "ferry/config/cdr.hpp"

namespace ferry::foxglove {

void ClientPublisher::enqueue(Job job) {
  {
    std::lock_guard lock(mutex_);
    job_bytes_ += job.cdr.size();
    jobs_.push_back(std::move(job));
  }
  queued_.notify_one();
}

void ClientPublisher::open(const std::string& topic, std::shared_ptr<const TopicCoding> coding,
                           Report report) {
  enqueue(Job{Job::Kind::Open, topic, std::move(coding), {}, std::move(report)});
}

void ClientPublisher::close(const std::string& topic) {
  enqueue(Job{Job::Kind::Close, topic, nullptr, {}, nullptr});
}

bool ClientPublisher::publish(const std::string& topic, std::vector<std::byte> cdr, Report report) {
  {
    std::lock_guard lock(mutex_);
    if (job_bytes_ + cdr.size() > kQueueBytes) return false;
  }
  enqueue(Job{Job::Kind::Publish, topic, nullptr, std::move(cdr), std::move(report)});
  return true;
}

void ClientPublisher::stop() {
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
  }
  queued_.notify_one();
}

void ClientPublisher::run() {
  while (true) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      queued_.wait(lock, [this] { return stopped_ || !jobs_.empty(); });
      if (stopped_) break;
      job = std::move(jobs_.front());
      jobs_.pop_front();
      job_bytes_ -= job.cdr.size();
    }
    perform(job);
  }
  ports_.clear();
}

void ClientPublisher::perform(Job& job) {
  switch (job.kind) {
    case Job::Kind::Open: {
      Port& port = ports_[job.topic];
      if (port.opened++ != 0) return;
      port.coding = job.coding;
      try {
        if (port.coding->layout.kind == cli::ChannelLayout::Kind::Bytes) {
          port.bytes.emplace(node_.publisher<Bytes>(job.topic));
        } else {
          port.raw.emplace(node_.raw_publisher(job.topic));
          port.sample.resize(port.raw->sample_size());
        }
        spdlog::info("foxglove: clientPublish opened topic '{}'", job.topic);
      } catch (const std::exception& e) {
        // The entry stays (it counts the opens); its messages are refused.
        job.report(
            fmt::format("clientPublish: cannot publish on topic '{}': {}", job.topic, e.what()));
      }
      return;
    }
    case Job::Kind::Close: {
      const auto it = ports_.find(job.topic);
      if (it != ports_.end() && --it->second.opened == 0) ports_.erase(it);
      return;
    }
    case Job::Kind::Publish: {
      const auto it = ports_.find(job.topic);
      if (it == ports_.end() || (!it->second.raw && !it->second.bytes)) return;
      publish_now(it->second, job);
      return;
    }
  }
}

void ClientPublisher::publish_now(Port& port, const Job& job) {
  const cli::ChannelLayout& layout = port.coding->layout;
  // The same check as ferry play's: the CDR form of the topic's type, or a
  // sentence naming what is wrong; nothing is published then.
  if (port.raw && port.sample.size() != layout.sample_size) {
    job.report(
        fmt::format("clientPublish on topic '{}': the topic takes {}-byte samples but "
                    "its type '{}' is {} bytes; not published",
                    job.topic, port.sample.size(), layout.ferry_type, layout.sample_size));
    return;
  }
  std::span<const std::byte> sample;
  try {
    sample = cli::decode(port.coding->config->schema, layout, job.cdr, port.sample);
  } catch (const config::CdrError& e) {
    job.report(fmt::format("clientPublish on topic '{}': not published: {}", job.topic, e.what()));
    return;
  }
  const PublishResult r = port.raw ? port.raw->publish(sample) : port.bytes->publish(sample);
  if (r.error)
    job.report(fmt::format("clientPublish on topic '{}': not published: {}", job.topic,
                           to_string(*r.error)));
}

}  // namespace ferry::foxglove

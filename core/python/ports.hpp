#pragma once
// The Python objects: Node, Publisher, Subscriber, Sample, Loan, WaitSet.
//
// Memory safety of numpy views (a view must never outlive the memory it
// shows):
// - A Sample's views (.array, .data, array fields) each hold the sample: a
//   view's base object owns a reference to it, so the sample goes back to
//   the publisher's pool only when release() was called (or the Sample is
//   gone) AND the last view is gone. After release() the Sample itself
//   refuses every read with ferry.Error; views taken before stay valid.
// - A Loan's views hold the loan the same way, but a published chunk belongs
//   to the subscribers: publish() refuses with ferry.Error while a view of
//   the loan is alive, so no view can ever write into a published chunk.

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ferry/node.hpp"
#include "ferry/raw.hpp"
#include "ferry/wait_set.hpp"
#include "topic_schema.hpp"

namespace ferry::python {

// A taken sample, shared by a Sample and its views.
struct SampleHold {
  explicit SampleHold(RawSample s) : sample(std::move(s)) {}
  RawSample sample;
};

class Sample {
 public:
  Sample(RawSample sample, std::shared_ptr<const TopicSchema> schema);

  [[nodiscard]] pybind11::object item(const std::string& field);
  [[nodiscard]] pybind11::dict to_dict();
  [[nodiscard]] pybind11::object array();
  [[nodiscard]] pybind11::memoryview data();
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] const std::string& topic() const noexcept { return schema_->topic; }
  [[nodiscard]] bool released() const noexcept { return hold_ == nullptr; }
  // sequence, publisher_id, publish_time_ns (a copy); throws once released.
  [[nodiscard]] SampleInfo info() const;
  void release() noexcept;

 private:
  [[nodiscard]] const std::byte* bytes() const;  // throws once released

  std::shared_ptr<SampleHold> hold_;
  std::shared_ptr<const TopicSchema> schema_;
  std::size_t size_;
  pybind11::object array_;  // cached .array view
};

// Python threads share ports, but a C++ port is used from one thread at a
// time, and publish() and take(timeout) release the GIL while they may
// wait. A port is marked busy while it is used; a second thread gets a
// ferry.Error instead of a data race. The mark is set and cleared with the
// GIL held (InUse lives outside the GIL release), so a plain bool suffices.
class InUse {
 public:
  InUse(bool& busy, const char* what, const std::string& topic);
  ~InUse() { busy_ = false; }
  InUse(const InUse&) = delete;
  InUse& operator=(const InUse&) = delete;

 private:
  bool& busy_;
};

// A publisher port, shared by a Publisher and its loans.
struct SharedPublisher {
  explicit SharedPublisher(RawPublisher p) : port(std::move(p)) {}
  RawPublisher port;
  bool busy = false;  // see InUse
};

// An unpublished chunk, shared by a Loan and its views.
struct LoanHold {
  LoanHold(std::shared_ptr<SharedPublisher> p, RawLoan l)
      : publisher(std::move(p)), loan(std::move(l)) {}
  std::shared_ptr<SharedPublisher> publisher;  // declared first: outlives the loan
  std::optional<RawLoan> loan;
};

class Loan {
 public:
  Loan(std::shared_ptr<LoanHold> hold, std::shared_ptr<const TopicSchema> schema, std::size_t size);

  [[nodiscard]] pybind11::object array();
  [[nodiscard]] pybind11::memoryview data();
  // loan["field"] = value: checked as publish(dict) checks it (a string or
  // sequence past its bound raises, naming the field); loan["field"]: a
  // string as str, an array or sequence (its used length) as a writable view.
  void set_item(const std::string& field, pybind11::handle value);
  [[nodiscard]] pybind11::object item(const std::string& field);
  PublishResult publish();
  // Gives the chunk back unpublished (also what leaving a `with` block does
  // when publish() was not called).
  void discard() noexcept;
  [[nodiscard]] bool done() const noexcept { return hold_ == nullptr; }

 private:
  [[nodiscard]] std::byte* bytes() const;  // throws once published or discarded

  std::shared_ptr<LoanHold> hold_;
  std::shared_ptr<const TopicSchema> schema_;
  std::size_t size_;
  pybind11::object array_;  // cached .array view
};

// An unpublished batch of loans, shared by a LoanBatch and its views.
struct LoanBatchHold {
  LoanBatchHold(std::shared_ptr<SharedPublisher> p, RawLoanBatch b)
      : publisher(std::move(p)), batch(std::move(b)) {}
  std::shared_ptr<SharedPublisher> publisher;  // declared first: outlives the batch
  std::optional<RawLoanBatch> batch;
};

// pub.loan_many(n) (docs/batches.md): n records to write in place, then
// publish() as publish_many publishes an array.
class LoanBatch {
 public:
  LoanBatch(std::shared_ptr<LoanBatchHold> hold, std::shared_ptr<const TopicSchema> schema);

  // The records as one writable structured array (samples that fit a ring
  // slot lie back to back); raises for pooled samples (use record(i)).
  [[nodiscard]] pybind11::object array();
  // Record i as a writable view (any batch).
  [[nodiscard]] pybind11::object record(std::size_t index);
  [[nodiscard]] std::size_t size() const;
  // Keeps the first n records; the others go back. Refused while views live.
  void shrink(std::size_t count);
  PublishResult publish();
  void discard() noexcept;
  [[nodiscard]] bool done() const noexcept { return hold_ == nullptr; }

 private:
  [[nodiscard]] RawLoanBatch& batch() const;  // throws once published or discarded
  // Raises when numpy views of the batch are alive (`what` is the call).
  void refuse_while_viewed(const char* what) const;

  std::shared_ptr<LoanBatchHold> hold_;
  std::shared_ptr<const TopicSchema> schema_;
  pybind11::object array_;  // cached .array view
};

class Publisher {
 public:
  Publisher(RawPublisher publisher, TopicSchema described);

  PublishResult publish(pybind11::handle value);
  // A numpy array of N records of the topic's dtype, published in order
  // (docs/batches.md: counts are samples x queues).
  PublishResult publish_many(const pybind11::handle& records);
  Loan loan(std::optional<std::size_t> size);
  LoanBatch loan_many(std::size_t count);
  [[nodiscard]] std::uint32_t subscriber_count() const noexcept {
    return port_->port.subscriber_count();
  }
  // Publisher::wait_for_subscribers, with the GIL released.
  bool wait_for_subscribers(std::uint32_t count, double timeout);
  [[nodiscard]] const TopicSchema& schema() const noexcept { return *schema_; }

 private:
  PublishResult publish_bytes(const std::byte* data, std::size_t size);
  PublishResult checked(PublishResult result) const;

  std::shared_ptr<SharedPublisher> port_;
  std::shared_ptr<const TopicSchema> schema_;
  std::vector<std::byte> buffer_;  // small samples encoded here, then copied into the ring
};

class Subscriber {
 public:
  Subscriber(RawSubscriber subscriber, TopicSchema described);

  // None when nothing came within `timeout` seconds (None or 0: never waits).
  std::optional<Sample> take(std::optional<double> timeout);
  // Up to `max` samples as a numpy structured array (a copy; length 0 when
  // none came within `timeout`, which waits for the first only).
  pybind11::array take_many(std::size_t max, std::optional<double> timeout);
  [[nodiscard]] std::uint32_t publisher_count() const noexcept { return port_->publisher_count(); }
  [[nodiscard]] const TopicSchema& schema() const noexcept { return *schema_; }
  [[nodiscard]] RawSubscriber& port() noexcept { return *port_; }

 private:
  std::unique_ptr<RawSubscriber> port_;
  std::shared_ptr<const TopicSchema> schema_;
  bool busy_ = false;  // see InUse
};

class WaitSet {
 public:
  // A Subscriber, a Server (ready while a request waits) or a Client (ready
  // while a response does); services.hpp's classes.
  std::size_t attach(pybind11::object port);
  void detach(pybind11::object port);
  // The attached ports that are ready (empty on timeout).
  pybind11::list wait(std::optional<double> timeout);
  void notify() noexcept { wait_set_.notify(); }

 private:
  ferry::WaitSet wait_set_;
  std::vector<pybind11::object> attached_ =
      std::vector<pybind11::object>(ferry::WaitSet::kMaxAttachments);
  // The attached clients' cores by index (null: not a client): a response
  // routed to its call by another call's take() is ready too.
  std::vector<detail::ClientCore*> clients_ =
      std::vector<detail::ClientCore*>(ferry::WaitSet::kMaxAttachments);
};

// Seconds (None: zero) as a timeout; a negative or non-finite one is an
// error naming `what`.
[[nodiscard]] std::chrono::nanoseconds to_timeout(std::optional<double> seconds, const char* what);

}  // namespace ferry::python

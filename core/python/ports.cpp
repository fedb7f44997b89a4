#include "ports.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <string_view>

#include "ferry/error.hpp"
#include "numpy_layout.hpp"
#include "sample_values.hpp"
#include "services.hpp"

namespace ferry::python {

namespace py = pybind11;

namespace {

// Dict samples up to this size are encoded in the publisher's buffer and
// copied into the ring; larger ones are encoded straight into a loan.
constexpr std::size_t kEncodeInBuffer = 64 * 1024;

// A numpy view of `size` bytes at `data`, whose base object owns `keep`:
// the memory stays valid while any array derived from the view lives.
py::array make_view(std::shared_ptr<void> keep, const py::object& dtype, std::byte* data,
                    std::size_t size, bool writable) {
  py::capsule base(new std::shared_ptr<void>(std::move(keep)),
                   [](void* owner) { delete static_cast<std::shared_ptr<void>*>(owner); });
  py::array view;
  if (dtype.is_none()) {
    view = py::array(py::dtype("u1"), std::vector<py::ssize_t>{static_cast<py::ssize_t>(size)},
                     std::vector<py::ssize_t>{1}, data, base);
  } else {
    view = py::array(py::reinterpret_borrow<py::dtype>(dtype), std::vector<py::ssize_t>{},
                     std::vector<py::ssize_t>{}, data, base);
  }
  if (!writable) view.attr("setflags")(py::arg("write") = false);
  return view;
}

py::memoryview byte_view(std::shared_ptr<void> keep, std::byte* data, std::size_t size,
                         bool writable) {
  return py::memoryview(make_view(std::move(keep), py::none(), data, size, writable));
}

// The topic's struct type; bytes and opaque samples have no fields.
const config::Type& struct_type(const TopicSchema& schema) {
  if (schema.type == nullptr) {
    throw Error(fmt::format("topic '{}' carries {} samples without fields; read them as s.data",
                            schema.topic, schema.bytes ? "bytes" : "opaque"));
  }
  return *schema.type;
}

const config::Field& find_field(const TopicSchema& schema, const std::string& name) {
  for (const config::Field& f : struct_type(schema).fields) {
    if (f.name == name) return f;
  }
  std::string names;
  for (const config::Field& f : schema.type->fields) names += (names.empty() ? "" : ", ") + f.name;
  throw Error(fmt::format("type {} of topic '{}' has no field '{}' (its fields: {})",
                          schema.type->name, schema.topic, name, names));
}

// Publishes with the GIL released: a `block` topic may wait for room.
template <class... Args>
PublishResult unlocked_publish(RawPublisher& port, Args&&... args) {
  const py::gil_scoped_release unlocked;
  return port.publish(std::forward<Args>(args)...);
}

// The result of a publish on `topic`, or ferry.Error when it was not sent.
PublishResult checked_result(const PublishResult& result, const std::string& topic) {
  if (result.error) {
    throw Error(
        fmt::format("publishing on topic '{}' failed: {}", topic, to_string(*result.error)));
  }
  return result;
}

}  // namespace

InUse::InUse(bool& busy, const char* what, const std::string& topic) : busy_(busy) {
  if (busy_) {
    throw Error(
        fmt::format("{} on topic '{}': the port is in use by another thread; use each "
                    "port from one thread at a time",
                    what, topic));
  }
  busy_ = true;
}

std::chrono::nanoseconds to_timeout(std::optional<double> seconds, const char* what) {
  if (!seconds) return std::chrono::nanoseconds::zero();
  if (!std::isfinite(*seconds) || *seconds < 0) {
    throw Error(
        fmt::format("{}: timeout must be a finite number of seconds >= 0, not {}", what, *seconds));
  }
  return std::chrono::nanoseconds(static_cast<std::int64_t>(std::min(*seconds, 1e9) * 1e9));
}

// --- Sample ---

Sample::Sample(RawSample sample, std::shared_ptr<const TopicSchema> schema)
    : hold_(std::make_shared<SampleHold>(std::move(sample))),
      schema_(std::move(schema)),
      size_(hold_->sample.size()) {}

const std::byte* Sample::bytes() const {
  if (hold_ == nullptr) {
    throw Error(
        fmt::format("this sample of topic '{}' was released; its fields, array and data "
                    "can no longer be read",
                    schema_->topic));
  }
  return hold_->sample.data();
}

py::object Sample::item(const std::string& field) {
  const std::byte* base = bytes();
  const config::Field& f = find_field(*schema_, field);
  if (f.is_array) return array()[py::str(field)];  // a zero-copy view
  if (f.sequence) {
    // A zero-copy view of the elements used.
    const auto n = used_length(f, base + f.offset);
    py::object data = array()[py::str(field)][py::str("data")];
    return data[py::slice(0, static_cast<py::ssize_t>(n), 1)];
  }
  return field_value(schema_->config->schema, f, base);
}

py::dict Sample::to_dict() {
  const std::byte* base = bytes();
  return struct_value(schema_->config->schema, struct_type(*schema_), base);
}

py::object Sample::array() {
  const std::byte* base = bytes();
  if (!array_) {
    array_ = make_view(hold_, schema_->dtype, const_cast<std::byte*>(base), size_, false);
  }
  return array_;
}

py::memoryview Sample::data() {
  const std::byte* base = bytes();
  return byte_view(hold_, const_cast<std::byte*>(base), size_, false);
}

SampleInfo Sample::info() const {
  (void)bytes();  // throws once released
  return hold_->sample.info();
}

void Sample::release() noexcept {
  array_ = py::object();
  hold_.reset();  // views alive keep the sample until they go
}

// --- Loan ---

Loan::Loan(std::shared_ptr<LoanHold> hold, std::shared_ptr<const TopicSchema> schema,
           std::size_t size)
    : hold_(std::move(hold)), schema_(std::move(schema)), size_(size) {}

std::byte* Loan::bytes() const {
  if (hold_ == nullptr) {
    throw Error(
        fmt::format("this loan on topic '{}' was published or discarded already", schema_->topic));
  }
  return hold_->loan->data();
}

py::object Loan::array() {
  std::byte* base = bytes();
  if (!array_) array_ = make_view(hold_, schema_->dtype, base, size_, true);
  return array_;
}

py::memoryview Loan::data() { return byte_view(hold_, bytes(), size_, true); }

void Loan::set_item(const std::string& field, py::handle value) {
  std::byte* base = bytes();
  const config::Field& f = find_field(*schema_, field);
  store_field(base + f.offset, value, schema_->config->schema, f, field);
}

py::object Loan::item(const std::string& field) {
  std::byte* base = bytes();
  const config::Field& f = find_field(*schema_, field);
  if (f.is_array) return array()[py::str(field)];
  if (f.sequence) {
    const auto n = used_length(f, base + f.offset);
    py::object data = array()[py::str(field)][py::str("data")];
    return data[py::slice(0, static_cast<py::ssize_t>(n), 1)];
  }
  return field_value(schema_->config->schema, f, base);
}

PublishResult Loan::publish() {
  (void)bytes();
  array_ = py::object();
  if (hold_.use_count() > 1) {
    throw Error(
        fmt::format("this loan on topic '{}' cannot be published while {} numpy view(s) "
                    "of it are alive (a published chunk belongs to the subscribers); "
                    "delete them first",
                    schema_->topic, hold_.use_count() - 1));
  }
  const InUse in_use(hold_->publisher->busy, "publish()",
                     schema_->topic);  // before: keeps the loan
  const std::shared_ptr<LoanHold> hold = std::move(hold_);
  const PublishResult result =
      unlocked_publish(hold->publisher->port, std::move(*hold->loan), size_);
  hold->loan.reset();
  return checked_result(result, schema_->topic);
}

void Loan::discard() noexcept {
  array_ = py::object();
  hold_.reset();  // the chunk goes back once no view holds it
}

// --- LoanBatch ---

LoanBatch::LoanBatch(std::shared_ptr<LoanBatchHold> hold, std::shared_ptr<const TopicSchema> schema)
    : hold_(std::move(hold)), schema_(std::move(schema)) {}

RawLoanBatch& LoanBatch::batch() const {
  if (hold_ == nullptr) {
    throw Error(fmt::format("this loaned batch on topic '{}' was published or discarded already",
                            schema_->topic));
  }
  return *hold_->batch;
}

void LoanBatch::refuse_while_viewed(const char* what) const {
  if (hold_.use_count() > 1) {
    throw Error(
        fmt::format("{} of this loaned batch on topic '{}' is refused while {} numpy "
                    "view(s) of it are alive; delete them first",
                    what, schema_->topic, hold_.use_count() - 1));
  }
}

py::object LoanBatch::array() {
  RawLoanBatch& b = batch();
  if (b.data() == nullptr && b.size() != 0) {
    throw Error(
        fmt::format("samples of topic '{}' are larger than a ring slot, a pool chunk "
                    "each: write them with batch.record(i)",
                    schema_->topic));
  }
  if (!array_) {
    const py::ssize_t n = static_cast<py::ssize_t>(b.size());
    const py::ssize_t stride = static_cast<py::ssize_t>(b.sample_size());
    py::capsule base(new std::shared_ptr<void>(hold_),
                     [](void* owner) { delete static_cast<std::shared_ptr<void>*>(owner); });
    array_ =
        py::array(py::reinterpret_borrow<py::dtype>(schema_->dtype), std::vector<py::ssize_t>{n},
                  std::vector<py::ssize_t>{stride}, b.data(), base);
  }
  return array_;
}

py::object LoanBatch::record(std::size_t index) {
  RawLoanBatch& b = batch();
  if (index >= b.size()) {
    throw Error(fmt::format("record {} of a loaned batch of {} on topic '{}'", index, b.size(),
                            schema_->topic));
  }
  return make_view(hold_, schema_->dtype, b.sample(index), b.sample_size(), true);
}

std::size_t LoanBatch::size() const { return hold_ == nullptr ? 0 : hold_->batch->size(); }

void LoanBatch::shrink(std::size_t count) {
  RawLoanBatch& b = batch();
  array_ = py::object();
  refuse_while_viewed("shrink()");
  b.shrink(count);
}

PublishResult LoanBatch::publish() {
  (void)batch();
  array_ = py::object();
  refuse_while_viewed("publish()");
  const InUse in_use(hold_->publisher->busy, "publish()",
                     schema_->topic);  // before: keeps the batch
  const std::shared_ptr<LoanBatchHold> hold = std::move(hold_);
  PublishResult result;
  {
    const py::gil_scoped_release unlocked;
    result = hold->publisher->port.publish_many(std::move(*hold->batch));
  }
  hold->batch.reset();
  return checked_result(result, schema_->topic);
}

void LoanBatch::discard() noexcept {
  array_ = py::object();
  hold_.reset();  // the batch goes back once no view holds it
}

// --- Publisher ---

Publisher::Publisher(RawPublisher publisher, TopicSchema described)
    : port_(std::make_shared<SharedPublisher>(std::move(publisher))),
      schema_(for_port(std::move(described), port_->port.sample_size())) {}

PublishResult Publisher::checked(PublishResult result) const {
  return checked_result(result, schema_->topic);
}

PublishResult Publisher::publish_bytes(const std::byte* data, std::size_t size) {
  if (schema_->bytes) {
    if (size > port_->port.max_size()) {
      throw Error(fmt::format("a payload of {} bytes exceeds topic '{}''s max_size of {} bytes",
                              size, schema_->topic, port_->port.max_size()));
    }
    auto loan = port_->port.loan(size);
    if (!loan) checked(PublishResult{.error = loan.error()});
    std::memcpy(loan->data(), data, size);
    return checked(unlocked_publish(port_->port, std::move(*loan), size));
  }
  if (size != schema_->size) {
    throw Error(fmt::format("topic '{}' takes samples of {} bytes, not {}", schema_->topic,
                            schema_->size, size));
  }
  return checked(unlocked_publish(port_->port, std::span<const std::byte>(data, size)));
}

PublishResult Publisher::publish(py::handle value) {
  const TopicSchema& s = *schema_;
  const InUse in_use(port_->busy, "publish()", s.topic);
  if (PyDict_Check(value.ptr())) {
    const config::Type& type = struct_type(s);
    if (s.size <= kEncodeInBuffer) {
      buffer_.assign(s.size, std::byte{0});
      encode_struct(s.config->schema, type, value, buffer_.data(), "");
      return checked(unlocked_publish(port_->port, std::span<const std::byte>(buffer_)));
    }
    auto loan = port_->port.loan(s.size);
    if (!loan) checked(PublishResult{.error = loan.error()});
    std::memset(loan->data(), 0, s.size);
    encode_struct(s.config->schema, type, value, loan->data(), "");  // throws: loan returned
    return checked(unlocked_publish(port_->port, std::move(*loan), s.size));
  }
  static const py::handle ndarray = numpy_attr("ndarray");
  static const py::handle generic = numpy_attr("generic");
  if (!s.dtype.is_none() && (py::isinstance(value, ndarray) || py::isinstance(value, generic))) {
    const py::array record = py::module_::import("numpy").attr("ascontiguousarray")(value);
    if (!record.dtype().equal(py::reinterpret_borrow<py::dtype>(s.dtype)) || record.size() != 1) {
      throw Error(
          fmt::format("topic '{}' takes one numpy record of dtype {} (type {}), not {} "
                      "of dtype {}",
                      s.topic, py::str(s.dtype).cast<std::string>(), s.type->name, record.size(),
                      py::str(record.dtype()).cast<std::string>()));
    }
    return publish_bytes(static_cast<const std::byte*>(record.data()), s.size);
  }
  if (PyObject_CheckBuffer(value.ptr()) != 0 && (s.bytes || s.type == nullptr)) {
    Py_buffer view;
    if (PyObject_GetBuffer(value.ptr(), &view, PyBUF_C_CONTIGUOUS) != 0)
      throw py::error_already_set();
    const std::unique_ptr<Py_buffer, void (*)(Py_buffer*)> guard(&view, PyBuffer_Release);
    return publish_bytes(static_cast<const std::byte*>(view.buf),
                         static_cast<std::size_t>(view.len));
  }
  if (s.bytes) {
    throw Error(
        fmt::format("topic '{}' carries bytes: publish() takes bytes, bytearray or a "
                    "memoryview, not {}",
                    s.topic, Py_TYPE(value.ptr())->tp_name));
  }
  throw Error(fmt::format(
      "publish() on topic '{}' takes a dict or a numpy record of type {}, not {}", s.topic,
      s.type != nullptr ? s.type->name : s.type_name, Py_TYPE(value.ptr())->tp_name));
}

PublishResult Publisher::publish_many(const py::handle& records) {
  const TopicSchema& s = *schema_;
  const InUse in_use(port_->busy, "publish_many()", s.topic);
  if (s.bytes || s.dtype.is_none()) {
    throw Error(
        fmt::format("publish_many() on topic '{}': a bytes topic takes one payload at a "
                    "time (publish())",
                    s.topic));
  }
  static const py::handle ndarray = numpy_attr("ndarray");
  if (!py::isinstance(records, ndarray)) {
    throw Error(fmt::format(
        "publish_many() on topic '{}' takes a numpy array of records of dtype {}, not {}", s.topic,
        py::str(s.dtype).cast<std::string>(), Py_TYPE(records.ptr())->tp_name));
  }
  const py::array array = py::module_::import("numpy").attr("ascontiguousarray")(records);
  if (!array.dtype().equal(py::reinterpret_borrow<py::dtype>(s.dtype))) {
    throw Error(fmt::format(
        "publish_many() on topic '{}' takes records of dtype {} (type {}), not of dtype {}",
        s.topic, py::str(s.dtype).cast<std::string>(), s.type->name,
        py::str(array.dtype()).cast<std::string>()));
  }
  const std::span<const std::byte> bytes(static_cast<const std::byte*>(array.data()),
                                         static_cast<std::size_t>(array.size()) * s.size);
  const py::gil_scoped_release unlocked;  // a `block` topic may wait for room
  return checked(port_->port.publish_many(bytes));
}

Loan Publisher::loan(std::optional<std::size_t> size) {
  const TopicSchema& s = *schema_;
  const InUse in_use(port_->busy, "loan()", s.topic);
  if (s.bytes && !size) {
    throw Error(
        fmt::format("topic '{}' carries bytes: loan(size) needs the payload's size", s.topic));
  }
  if (!s.bytes && size && *size != s.size) {
    throw Error(fmt::format("topic '{}' takes samples of {} bytes: call loan() without a size",
                            s.topic, s.size));
  }
  const std::size_t bytes = size.value_or(s.size);
  if (s.bytes && bytes > port_->port.max_size()) {
    throw Error(fmt::format("a loan of {} bytes exceeds topic '{}''s max_size of {} bytes", bytes,
                            s.topic, port_->port.max_size()));
  }
  auto loan = port_->port.loan(bytes);
  if (!loan) {
    throw Error(fmt::format("loan on topic '{}' failed: {}", s.topic, to_string(loan.error())));
  }
  return Loan(std::make_shared<LoanHold>(port_, std::move(*loan)), schema_, bytes);
}

LoanBatch Publisher::loan_many(std::size_t count) {
  const TopicSchema& s = *schema_;
  const InUse in_use(port_->busy, "loan_many()", s.topic);
  if (s.bytes) {
    throw Error(fmt::format(
        "topic '{}' carries bytes: loan_many() needs samples of one size; loan() each", s.topic));
  }
  auto batch = port_->port.loan_many(count);
  if (!batch) {
    std::string why = to_string(batch.error());
    if (batch.error() == ErrorCode::InvalidArgument) {
      why = fmt::format("a batch holds at most {} samples", port_->port.loan_many_capacity());
    } else if (batch.error() == ErrorCode::TooManyLoans) {
      why = "a loaned batch is out already (one at a time), or max_loans would be passed";
    }
    throw Error(fmt::format("loan_many({}) on topic '{}' failed: {}", count, s.topic, why));
  }
  return LoanBatch(std::make_shared<LoanBatchHold>(port_, std::move(*batch)), schema_);
}

// --- Subscriber ---

Subscriber::Subscriber(RawSubscriber subscriber, TopicSchema described)
    : port_(std::make_unique<RawSubscriber>(std::move(subscriber))),
      schema_(for_port(std::move(described), port_->sample_size())) {}

std::optional<Sample> Subscriber::take(std::optional<double> timeout) {
  const auto wait = to_timeout(timeout, "take()");
  const InUse in_use(busy_, "take()", schema_->topic);
  std::expected<std::optional<RawSample>, ErrorCode> taken;
  if (wait.count() == 0) {
    taken = port_->try_take();
  } else {
    py::gil_scoped_release unlocked;
    taken = port_->try_take(wait);
  }
  // An error is not "nothing came": at max_held, once the node was
  // declared dead, or in a forked child, None would come back at once for
  // ever, and a loop waiting with a timeout would spin.
  if (!taken) {
    throw Error(
        fmt::format("take() on topic '{}' failed: {}", schema_->topic, to_string(taken.error())));
  }
  if (!taken->has_value()) return std::nullopt;
  return Sample(std::move(**taken), schema_);
}

py::array Subscriber::take_many(std::size_t max, std::optional<double> timeout) {
  const TopicSchema& s = *schema_;
  const auto wait = to_timeout(timeout, "take_many()");
  const InUse in_use(busy_, "take_many()", s.topic);
  if (s.bytes || s.dtype.is_none()) {
    throw Error(fmt::format(
        "take_many() on topic '{}': a bytes topic is taken one sample at a time (take())",
        s.topic));
  }
  py::array out(py::reinterpret_borrow<py::dtype>(s.dtype),
                std::vector<py::ssize_t>{static_cast<py::ssize_t>(max)});
  const std::span<std::byte> into(static_cast<std::byte*>(out.mutable_data()), max * s.size);
  std::expected<std::size_t, ErrorCode> taken;
  if (wait.count() == 0) {
    taken = port_->take_many(into);
  } else {
    py::gil_scoped_release unlocked;  // `out` is ours alone until we return it
    taken = port_->take_many(into, wait);
  }
  // As take(): an error is not "nothing came".
  if (!taken) {
    throw Error(
        fmt::format("take_many() on topic '{}' failed: {}", s.topic, to_string(taken.error())));
  }
  const std::size_t n = *taken;
  if (n == max) return out;
  return out[py::slice(0, static_cast<py::ssize_t>(n), 1)].cast<py::array>();
}

bool Publisher::wait_for_subscribers(std::uint32_t count, double timeout) {
  const auto wait = to_timeout(timeout, "wait_for_subscribers()");
  py::gil_scoped_release unlocked;
  return port_->port.wait_for_subscribers(count, wait);
}

// --- WaitSet ---

std::size_t WaitSet::attach(py::object port) {
  std::size_t index = 0;
  if (py::isinstance<Server>(port)) {
    index = wait_set_.attach(port.cast<Server&>().core());
  } else if (py::isinstance<Client>(port)) {
    detail::ClientCore& core = port.cast<Client&>().core();
    index = wait_set_.attach(core);
    clients_.at(index) = &core;
  } else {
    index = wait_set_.attach(port.cast<Subscriber&>().port());
  }
  attached_.at(index) = std::move(port);
  return index;
}

void WaitSet::detach(py::object port) {
  if (py::isinstance<Server>(port)) {
    wait_set_.detach(port.cast<Server&>().core());
  } else if (py::isinstance<Client>(port)) {
    wait_set_.detach(port.cast<Client&>().core());
  } else {
    wait_set_.detach(port.cast<Subscriber&>().port());
  }
  for (std::size_t i = 0; i < attached_.size(); ++i) {
    if (attached_[i] && attached_[i].is(port)) {
      attached_[i] = py::object();
      clients_[i] = nullptr;
    }
  }
}

py::list WaitSet::wait(std::optional<double> timeout) {
  const auto wait = to_timeout(timeout, "WaitSet.wait()");
  std::uint64_t outcomes = 0;  // clients with a call's outcome waiting: ready without a wake-up
  for (std::size_t i = 0; i < clients_.size(); ++i) {
    if (clients_[i] != nullptr && attached_[i] && clients_[i]->has_outcome())
      outcomes |= std::uint64_t{1} << i;
  }
  Ready ready;
  {
    py::gil_scoped_release unlocked;
    ready = wait_set_.wait(outcomes != 0 ? std::chrono::nanoseconds::zero() : wait);
  }
  py::list out;
  for (std::size_t index = 0; index < attached_.size(); ++index) {
    if (attached_[index] && (ready.contains(index) || (outcomes >> index & 1U) != 0))
      out.append(attached_[index]);
  }
  return out;
}

}  // namespace ferry::python

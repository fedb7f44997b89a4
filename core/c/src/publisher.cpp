// Publishers: create, destroy, publish by copy (one and many), counts.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "error.hpp"
#include "handles.hpp"
#include "publish_result.hpp"
#include "timeout.hpp"

using ferry::c::fail;
using ferry::c::fail_null;
using ferry::c::guarded;
using ferry::c::report;

namespace {

// A bytes topic's sample, copied into a loan of its size (as
// Publisher<Bytes>::publish does).
ferry_error_t publish_bytes(ferry_publisher_t* pub, const void* data, size_t size,
                            ferry_publish_result_t* result) noexcept {
  constexpr const char* kCall = "ferry_publish";
  if (size > pub->port.max_size()) {
    return fail(FERRY_ERROR_TOO_LARGE, "%s: %zu bytes exceed topic '%s''s max_size of %zu bytes",
                kCall, size, pub->port.topic().c_str(), pub->port.max_size());
  }
  auto loan = pub->port.loan(size);
  if (!loan) return ferry::c::fail_code(loan.error(), kCall, pub->port.topic().c_str());
  if (size != 0) std::memcpy(loan->data(), data, size);
  return report(pub->port.publish(std::move(*loan), size), result, kCall, pub->port.topic());
}

}  // namespace

extern "C" {

ferry_error_t ferry_publisher_create(ferry_node_t* node, const char* topic, const char* type_name,
                                     size_t size, size_t alignment, ferry_publisher_t** publisher) {
  constexpr const char* kCall = "ferry_publisher_create";
  if (publisher == nullptr) return fail_null(kCall, "the publisher out-pointer");
  *publisher = nullptr;
  if (node == nullptr) return fail_null(kCall, "node");
  if (topic == nullptr) return fail_null(kCall, "topic");
  if (type_name == nullptr) return fail_null(kCall, "type_name");
  return guarded(kCall, [&] {
    auto pub = std::make_unique<ferry_publisher_t>(
        node->node.raw_publisher(topic, type_name, size, alignment));
    pub->loan_blocks.reserve(4);
    pub->add_loan_block();
    *publisher = pub.release();
    return FERRY_OK;
  });
}

void ferry_publisher_destroy(ferry_publisher_t* publisher) { delete publisher; }

ferry_error_t ferry_publish(ferry_publisher_t* publisher, const void* data, size_t size,
                            ferry_publish_result_t* result) {
  constexpr const char* kCall = "ferry_publish";
  if (publisher == nullptr) [[unlikely]]
    return fail_null(kCall, "publisher");
  if (data == nullptr && size != 0) [[unlikely]]
    return fail_null(kCall, "data");
  const std::size_t sample_size = publisher->port.sample_size();
  if (sample_size == 0) return publish_bytes(publisher, data, size, result);
  const ferry::PublishResult r =
      publisher->port.publish(std::span(static_cast<const std::byte*>(data), size));
  if (r.error && size != sample_size) [[unlikely]] {
    if (result != nullptr) *result = ferry_publish_result_t{};
    return fail(FERRY_ERROR_INVALID_ARGUMENT,
                "%s: %zu bytes given, but topic '%s' takes samples of %zu bytes", kCall, size,
                publisher->port.topic().c_str(), sample_size);
  }
  return report(r, result, kCall, publisher->port.topic());
}

ferry_error_t ferry_publish_many(ferry_publisher_t* publisher, const void* samples, size_t count,
                                 size_t sample_size, ferry_publish_result_t* result) {
  constexpr const char* kCall = "ferry_publish_many";
  if (publisher == nullptr) [[unlikely]]
    return fail_null(kCall, "publisher");
  if (samples == nullptr && count != 0) [[unlikely]]
    return fail_null(kCall, "samples");
  const std::size_t topic_size = publisher->port.sample_size();
  if (sample_size != topic_size || topic_size == 0) [[unlikely]] {
    if (result != nullptr) *result = ferry_publish_result_t{};
    return fail(FERRY_ERROR_INVALID_ARGUMENT,
                "%s: samples of %zu bytes given, but topic '%s' takes samples of %zu bytes%s",
                kCall, sample_size, publisher->port.topic().c_str(), topic_size,
                topic_size == 0 ? " (a bytes topic: publish them one by one)" : "");
  }
  if (count > SIZE_MAX / sample_size) [[unlikely]]
    return fail(FERRY_ERROR_INVALID_ARGUMENT, "%s: %zu samples of %zu bytes overflow size_t", kCall,
                count, sample_size);
  return report(publisher->port.publish_many(
                    std::span(static_cast<const std::byte*>(samples), count * sample_size)),
                result, kCall, publisher->port.topic());
}

size_t ferry_publisher_subscriber_count(const ferry_publisher_t* publisher) {
  if (publisher == nullptr) {
    (void)fail_null("ferry_publisher_subscriber_count", "publisher");
    return 0;
  }
  return publisher->port.subscriber_count();
}

size_t ferry_publisher_wait_for_subscribers(const ferry_publisher_t* publisher, size_t count,
                                            uint64_t timeout_ns) {
  if (publisher == nullptr) {
    (void)fail_null("ferry_publisher_wait_for_subscribers", "publisher");
    return 0;
  }
  const auto wanted = static_cast<std::uint32_t>(std::min<size_t>(count, UINT32_MAX));
  (void)publisher->port.wait_for_subscribers(wanted, ferry::c::to_timeout(timeout_ns));
  return publisher->port.subscriber_count();
}

uint64_t ferry_publisher_id(const ferry_publisher_t* publisher) {
  if (publisher == nullptr) {
    (void)fail_null("ferry_publisher_id", "publisher");
    return 0;
  }
  return publisher->port.publisher_id();
}

}  // extern "C"

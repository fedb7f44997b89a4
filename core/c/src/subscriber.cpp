// Subscribers: create, destroy, take (one and many), counts.
#include "error.hpp"
#include "handles.hpp"
#include "timeout.hpp"

using ferry::c::fail;
using ferry::c::fail_null;
using ferry::c::guarded;
using ferry::c::to_timeout;

ferry_subscriber_s::ferry_subscriber_s(ferry::RawSubscriber&& s)
    : port(std::move(s)), slots(new ferry::c::SampleSlots) {}

// The slots stay until every sample handed out is released; the port then
// detaches from its waitset and drops what is queued.
ferry_subscriber_s::~ferry_subscriber_s() { ferry::c::SampleSlots::close(slots); }

extern "C" {

ferry_error_t ferry_subscriber_create(ferry_node_t* node, const char* topic, const char* type_name,
                                      size_t size, size_t alignment,
                                      ferry_subscriber_t** subscriber) {
  constexpr const char* kCall = "ferry_subscriber_create";
  if (subscriber == nullptr) return fail_null(kCall, "the subscriber out-pointer");
  *subscriber = nullptr;
  if (node == nullptr) return fail_null(kCall, "node");
  if (topic == nullptr) return fail_null(kCall, "topic");
  if (type_name == nullptr) return fail_null(kCall, "type_name");
  return guarded(kCall, [&] {
    ferry::c::SampleSlots::sweep();
    *subscriber =
        new ferry_subscriber_t(node->node.raw_subscriber(topic, type_name, size, alignment));
    return FERRY_OK;
  });
}

void ferry_subscriber_destroy(ferry_subscriber_t* subscriber) { delete subscriber; }

ferry_error_t ferry_take(ferry_subscriber_t* subscriber, uint64_t timeout_ns,
                         ferry_sample_t** sample) {
  constexpr const char* kCall = "ferry_take";
  if (sample == nullptr) [[unlikely]]
    return fail_null(kCall, "the sample out-pointer");
  *sample = nullptr;
  if (subscriber == nullptr) [[unlikely]]
    return fail_null(kCall, "subscriber");
  auto taken = subscriber->port.try_take(to_timeout(timeout_ns));
  if (!taken) [[unlikely]]
    return ferry::c::fail_code(taken.error(), kCall, subscriber->port.topic().c_str());
  if (*taken) {
    *sample = subscriber->slots->hold(std::move(**taken));
    if (*sample == nullptr) [[unlikely]]
      return fail(FERRY_ERROR_INTERNAL, "%s on topic '%s': no free sample handle", kCall,
                  subscriber->port.topic().c_str());
  }
  return FERRY_OK;
}

ferry_error_t ferry_take_many(ferry_subscriber_t* subscriber, void* out, size_t max_count,
                              size_t sample_size, uint64_t timeout_ns, size_t* taken) {
  constexpr const char* kCall = "ferry_take_many";
  if (taken == nullptr) [[unlikely]]
    return fail_null(kCall, "the taken out-pointer");
  *taken = 0;
  if (subscriber == nullptr) [[unlikely]]
    return fail_null(kCall, "subscriber");
  if (out == nullptr && max_count != 0) [[unlikely]]
    return fail_null(kCall, "out");
  const std::size_t topic_size = subscriber->port.sample_size();
  if (sample_size != topic_size || topic_size == 0) [[unlikely]] {
    return fail(FERRY_ERROR_INVALID_ARGUMENT,
                "%s: room for samples of %zu bytes given, but topic '%s' has samples of %zu "
                "bytes%s",
                kCall, sample_size, subscriber->port.topic().c_str(), topic_size,
                topic_size == 0 ? " (a bytes topic: take its samples one by one)" : "");
  }
  if (max_count > SIZE_MAX / sample_size) [[unlikely]]
    return fail(FERRY_ERROR_INVALID_ARGUMENT, "%s: %zu samples of %zu bytes overflow size_t", kCall,
                max_count, sample_size);
  const auto got = subscriber->port.take_many(
      std::span(static_cast<std::byte*>(out), max_count * sample_size), to_timeout(timeout_ns));
  if (!got) [[unlikely]]
    return ferry::c::fail_code(got.error(), kCall, subscriber->port.topic().c_str());
  *taken = *got;
  return FERRY_OK;
}

size_t ferry_subscriber_publisher_count(const ferry_subscriber_t* subscriber) {
  if (subscriber == nullptr) {
    (void)fail_null("ferry_subscriber_publisher_count", "subscriber");
    return 0;
  }
  return subscriber->port.publisher_count();
}

ferry_error_t ferry_subscriber_set_take_spin(ferry_subscriber_t* subscriber, uint32_t polls) {
  if (subscriber == nullptr) return fail_null("ferry_subscriber_set_take_spin", "subscriber");
  subscriber->port.set_take_spin(polls);
  return FERRY_OK;
}

}  // extern "C"

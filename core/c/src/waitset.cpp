// WaitSets: attach, detach, wait, notify, fd.
#include "error.hpp"
#include "handles.hpp"
#include "timeout.hpp"

using ferry::c::fail_null;
using ferry::c::guarded;

extern "C" {

ferry_error_t ferry_waitset_create(ferry_waitset_t** waitset) {
  constexpr const char* kCall = "ferry_waitset_create";
  if (waitset == nullptr) return fail_null(kCall, "the waitset out-pointer");
  *waitset = nullptr;
  return guarded(kCall, [&] {
    *waitset = new ferry_waitset_t;
    return FERRY_OK;
  });
}

void ferry_waitset_destroy(ferry_waitset_t* waitset) { delete waitset; }

ferry_error_t ferry_waitset_attach(ferry_waitset_t* waitset, ferry_subscriber_t* subscriber,
                                   size_t* index) {
  constexpr const char* kCall = "ferry_waitset_attach";
  if (waitset == nullptr) return fail_null(kCall, "waitset");
  if (subscriber == nullptr) return fail_null(kCall, "subscriber");
  return guarded(kCall, [&] {
    const std::size_t at = waitset->set.attach(subscriber->port);
    if (index != nullptr) *index = at;
    return FERRY_OK;
  });
}

ferry_error_t ferry_waitset_detach(ferry_waitset_t* waitset, ferry_subscriber_t* subscriber) {
  constexpr const char* kCall = "ferry_waitset_detach";
  if (waitset == nullptr) return fail_null(kCall, "waitset");
  if (subscriber == nullptr) return fail_null(kCall, "subscriber");
  return guarded(kCall, [&] {
    waitset->set.detach(subscriber->port);
    return FERRY_OK;
  });
}

ferry_error_t ferry_waitset_wait(ferry_waitset_t* waitset, uint64_t timeout_ns, uint64_t* ready) {
  constexpr const char* kCall = "ferry_waitset_wait";
  if (ready != nullptr) *ready = 0;
  if (waitset == nullptr) return fail_null(kCall, "waitset");
  return guarded(kCall, [&] {
    const ferry::Ready r = waitset->set.wait(ferry::c::to_timeout(timeout_ns));
    if (ready != nullptr) *ready = r.mask();
    return FERRY_OK;
  });
}

ferry_error_t ferry_waitset_notify(ferry_waitset_t* waitset) {
  if (waitset == nullptr) return fail_null("ferry_waitset_notify", "waitset");
  waitset->set.notify();
  return FERRY_OK;
}

int ferry_waitset_fd(ferry_waitset_t* waitset) {
  constexpr const char* kCall = "ferry_waitset_fd";
  if (waitset == nullptr) {
    (void)fail_null(kCall, "waitset");
    return -1;
  }
  int fd = -1;
  if (guarded(kCall, [&] {
        fd = waitset->set.fd();
        return FERRY_OK;
      }) != FERRY_OK) {
    return -1;
  }
  return fd;
}

}  // extern "C"

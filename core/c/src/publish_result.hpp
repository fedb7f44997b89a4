#pragma once
// A C++ PublishResult as the C struct and error value.

#include "error.hpp"
#include "ferry/publish_result.hpp"

namespace ferry::c {

// Fills `out` (may be NULL) and returns the result's error, if any, as an
// error value with a sentence naming the call and topic.
FERRY_HOT inline ferry_error_t report(const PublishResult& r, ferry_publish_result_t* out,
                                      const char* call, const std::string& topic) noexcept {
  if (out != nullptr)
    *out = ferry_publish_result_t{r.delivered, r.dropped, r.overwritten, r.timed_out};
  if (r.error) [[unlikely]]
    return fail_code(*r.error, call, topic.c_str());
  return FERRY_OK;
}

}  // namespace ferry::c

#pragma once
// The C API's errors: this thread's last sentence, and the one place where
// C++ exceptions stop (guarded) before they could cross into C.

#include <cstdarg>
#include <exception>
#include <new>

#include "ferry/error.hpp"
#include "ferry/ferry.h"

namespace ferry::c {

// Records a sentence (printf format) for ferry_last_error() and returns
// `code`. Allocates nothing: the text goes into a fixed thread-local buffer.
[[gnu::format(printf, 2, 3)]] ferry_error_t fail(ferry_error_t code, const char* format,
                                                 ...) noexcept;

// The C value of a C++ ErrorCode (checked to stay in step in error.cpp).
[[nodiscard]] constexpr ferry_error_t to_c(ErrorCode code) noexcept {
  // The caller's mistake has the C API's own code already.
  if (code == ErrorCode::InvalidArgument) return FERRY_ERROR_INVALID_ARGUMENT;
  return static_cast<ferry_error_t>(static_cast<int>(code) + 1);
}

// ErrorCode's sentence for a refusal on the hot path, naming the call and topic.
ferry_error_t fail_code(ErrorCode code, const char* call, const char* topic) noexcept;

// Runs `body` (which returns a ferry_error_t) and turns any exception it
// throws into an error value and a sentence: ferry::Error (a refusal that
// names its fix) is FERRY_ERROR_REFUSED, std::bad_alloc is
// FERRY_ERROR_NO_MEMORY, anything else FERRY_ERROR_INTERNAL.
template <class Body>
ferry_error_t guarded(const char* call, Body&& body) noexcept {
  try {
    return body();
  } catch (const ferry::Error& e) {
    return fail(FERRY_ERROR_REFUSED, "%s: %s", call, e.what());
  } catch (const std::bad_alloc&) {
    return fail(FERRY_ERROR_NO_MEMORY, "%s: out of memory", call);
  } catch (const std::exception& e) {
    return fail(FERRY_ERROR_INTERNAL, "%s failed unexpectedly: %s", call, e.what());
  } catch (...) {
    return fail(FERRY_ERROR_INTERNAL, "%s failed unexpectedly (an unknown exception)", call);
  }
}

// A NULL argument: FERRY_ERROR_INVALID_ARGUMENT naming it.
inline ferry_error_t fail_null(const char* call, const char* argument) noexcept {
  return fail(FERRY_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", call, argument);
}

}  // namespace ferry::c

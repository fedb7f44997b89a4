// ferry_last_error, ferry_error_name, and the ErrorCode mapping.
#include "error.hpp"

#include <cstdio>

namespace ferry::c {

// ferry_error_t mirrors ErrorCode (plus one, for FERRY_OK): a new ErrorCode
// needs its C enumerator, and these fail until it has one.
static_assert(to_c(ErrorCode::TooManyHeld) == FERRY_ERROR_TOO_MANY_HELD);
static_assert(to_c(ErrorCode::TooManyLoans) == FERRY_ERROR_TOO_MANY_LOANS);
static_assert(to_c(ErrorCode::PoolExhausted) == FERRY_ERROR_POOL_EXHAUSTED);
static_assert(to_c(ErrorCode::TooLarge) == FERRY_ERROR_TOO_LARGE);
static_assert(to_c(ErrorCode::PortClosed) == FERRY_ERROR_PORT_CLOSED);
static_assert(to_c(ErrorCode::NodeDeclaredDead) == FERRY_ERROR_NODE_DECLARED_DEAD);
static_assert(to_c(ErrorCode::CorruptData) == FERRY_ERROR_CORRUPT_DATA);
static_assert(to_c(ErrorCode::InheritedNode) == FERRY_ERROR_INHERITED_NODE);
static_assert(to_c(ErrorCode::NoServer) == FERRY_ERROR_NO_SERVER);
static_assert(to_c(ErrorCode::Timeout) == FERRY_ERROR_TIMEOUT);
static_assert(to_c(ErrorCode::ServerGone) == FERRY_ERROR_SERVER_GONE);
static_assert(to_c(ErrorCode::TooManyPending) == FERRY_ERROR_TOO_MANY_PENDING);
static_assert(to_c(ErrorCode::NoResponse) == FERRY_ERROR_NO_RESPONSE);
static_assert(to_c(ErrorCode::InvalidArgument) == FERRY_ERROR_INVALID_ARGUMENT);
static_assert(static_cast<int>(ErrorCode::InvalidArgument) + 1 < FERRY_ERROR_INVALID_ARGUMENT,
              "ErrorCode grew into the C API's own range");

namespace {

// One sentence per thread; a plain array, so no TLS constructor or
// destructor runs for it.
thread_local char t_last_error[512];

}  // namespace

ferry_error_t fail(ferry_error_t code, const char* format, ...) noexcept {
  std::va_list args;
  va_start(args, format);
  std::vsnprintf(t_last_error, sizeof t_last_error, format, args);
  va_end(args);
  return code;
}

ferry_error_t fail_code(ErrorCode code, const char* call, const char* topic) noexcept {
  return fail(to_c(code), "%s on topic '%s': %s", call, topic, ferry::to_string(code));
}

}  // namespace ferry::c

extern "C" {

const char* ferry_last_error(void) { return ferry::c::t_last_error; }

const char* ferry_error_name(ferry_error_t error) {
  switch (error) {
    case FERRY_OK:
      return "OK";
    case FERRY_ERROR_TOO_MANY_HELD:
      return "TOO_MANY_HELD";
    case FERRY_ERROR_TOO_MANY_LOANS:
      return "TOO_MANY_LOANS";
    case FERRY_ERROR_POOL_EXHAUSTED:
      return "POOL_EXHAUSTED";
    case FERRY_ERROR_TOO_LARGE:
      return "TOO_LARGE";
    case FERRY_ERROR_PORT_CLOSED:
      return "PORT_CLOSED";
    case FERRY_ERROR_NODE_DECLARED_DEAD:
      return "NODE_DECLARED_DEAD";
    case FERRY_ERROR_CORRUPT_DATA:
      return "CORRUPT_DATA";
    case FERRY_ERROR_INHERITED_NODE:
      return "INHERITED_NODE";
    case FERRY_ERROR_NO_SERVER:
      return "NO_SERVER";
    case FERRY_ERROR_TIMEOUT:
      return "TIMEOUT";
    case FERRY_ERROR_SERVER_GONE:
      return "SERVER_GONE";
    case FERRY_ERROR_TOO_MANY_PENDING:
      return "TOO_MANY_PENDING";
    case FERRY_ERROR_NO_RESPONSE:
      return "NO_RESPONSE";
    case FERRY_ERROR_INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case FERRY_ERROR_REFUSED:
      return "REFUSED";
    case FERRY_ERROR_NO_MEMORY:
      return "NO_MEMORY";
    case FERRY_ERROR_INTERNAL:
      return "INTERNAL";
  }
  return "UNKNOWN";
}

}  // extern "C"

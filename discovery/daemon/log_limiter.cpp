#include "log_limiter.hpp"

namespace ferry::discovery {

bool LogLimiter::allow(const std::string& key, std::uint64_t& suppressed, Clock::time_point now) {
  auto [it, first] = kinds_.try_emplace(key);
  Kind& kind = it->second;
  if (!first && now - kind.last < interval_) {
    ++kind.suppressed;
    return false;
  }
  kind.last = now;
  suppressed = kind.suppressed;
  kind.suppressed = 0;
  return true;
}

}  // namespace ferry::discovery

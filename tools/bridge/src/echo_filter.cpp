#include "echo_filter.hpp"

#include <algorithm>
#include <cstring>

namespace ferry::bridge {

std::uint64_t fingerprint(std::span<const std::byte> bytes) noexcept {
  constexpr std::uint64_t kMul = 0x9E3779B97F4A7C15ull;
  std::uint64_t h = bytes.size() * kMul;
  std::size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, bytes.data() + i, 8);
    h = (h ^ w) * kMul;
    h ^= h >> 29;
  }
  std::uint64_t tail = 0;
  std::memcpy(&tail, bytes.data() + i, bytes.size() - i);
  h = (h ^ tail) * kMul;
  return h ^ (h >> 32);
}

void EchoFilter::published(std::uint64_t print) {
  std::lock_guard lock(mutex_);
  if (prints_.size() == capacity_) prints_.pop_front();
  prints_.push_back(print);
}

bool EchoFilter::is_echo(std::uint64_t print) {
  std::lock_guard lock(mutex_);
  const auto it = std::find(prints_.begin(), prints_.end(), print);
  if (it == prints_.end()) return false;
  prints_.erase(it);
  return true;
}

}  // namespace ferry::bridge

#include "fanout/fanout_shared.hpp"

#include <sys/mman.h>

#include <new>
#include <stdexcept>

namespace ferry::bench {

FanoutShared::FanoutShared(std::uint32_t subscribers, std::uint64_t samples)
    : bytes_(sizeof(Header) + (2 + std::size_t{subscribers}) * samples * sizeof(std::int64_t)),
      subscribers_(subscribers),
      samples_(samples) {
  void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    throw std::runtime_error("cannot map the fanout benchmark's control block (mmap failed)");
  }
  header_ = new (p) Header{};
  // Anonymous mappings start zeroed: the arrays need no initialisation.
  start_ = reinterpret_cast<std::int64_t*>(static_cast<std::byte*>(p) + sizeof(Header));
  cost_ = start_ + samples;
  woke_ = cost_ + samples;
}

FanoutShared::~FanoutShared() {
  header_->~Header();
  ::munmap(header_, bytes_);
}

}  // namespace ferry::bench

#pragma once
// One sample's CDR form, encoded once by the taking thread and shared by
// every client it goes to (each adds its own 13-byte messageData header).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "protocol.hpp"

namespace ferry::foxglove {

class Payload {
 public:
  // Uninitialised: the encoder writes every byte.
  explicit Payload(std::size_t size)
      : bytes_(std::make_unique_for_overwrite<std::byte[]>(size)), size_(size) {}
  [[nodiscard]] std::span<std::byte> bytes() noexcept { return {bytes_.get(), size_}; }
  [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return {bytes_.get(), size_}; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  std::unique_ptr<std::byte[]> bytes_;
  std::size_t size_;
};

// A sample on its way to a client.
struct OutMessage {
  ChannelId channel = 0;
  std::uint64_t timestamp_ns = 0;  // the sample's publish_time_ns
  std::shared_ptr<const Payload> payload;
};

}  // namespace ferry::foxglove

#pragma once
// Every size limit of the control-plane protocol in one place: the decoder
// enforces them on input, the encoder on output, so that nothing one side
// sends can be refused by the other for being too large.

#include <cstddef>
#include <cstdint>

namespace ferry::discovery {

// Largest datagram either side sends or accepts (header included). A
// SOCK_SEQPACKET datagram is one message; anything larger is an error.
inline constexpr std::size_t kMaxMessageSize = 64 * 1024;

// Per-field string limits, in bytes.
inline constexpr std::size_t kMaxNodeName = 64;
inline constexpr std::size_t kMaxTopicName = 128;
inline constexpr std::size_t kMaxTypeName = 128;
inline constexpr std::size_t kMaxErrorMessage = 1024;
inline constexpr std::size_t kMaxShmName = 200;
inline constexpr std::size_t kMaxDomainName = 32;
inline constexpr std::size_t kMaxPathName = 1024;
// A type's layout fingerprint (config::kMaxLayoutFingerprint).
inline constexpr std::size_t kMaxTypeLayout = 16 * 1024;
// A ConfigText page: larger configurations take several.
inline constexpr std::size_t kMaxConfigChunk = 32 * 1024;

// Lists carry a u16 count; the message size limit bounds them further.
inline constexpr std::size_t kMaxListEntries = 0xFFFF;

}  // namespace ferry::discovery

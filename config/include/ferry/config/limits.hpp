#pragma once
// The numeric limits of a configuration, in one place so that messages,
// the loader and the runtime agree on them.

#include <cstddef>
#include <cstdint>

namespace ferry::config {

// Samples up to this size travel inline in the ring slots (copy path); a
// larger sample must go through the loaned-memory pool, so when `pool:` is
// given it needs a size class at least that big.
inline constexpr std::uint64_t kMaxInlineSample = 4096;

// Largest type or bytes topic accepted. Bigger is almost surely a typo (an
// extra digit in an array length) and would not fit /dev/shm anyway.
inline constexpr std::uint64_t kMaxSampleSize = std::uint64_t{1} << 30;  // 1 GiB

// Opaque types may ask for an alignment up to a page (power of two).
inline constexpr std::uint64_t kMaxAlign = 4096;

inline constexpr std::size_t kMaxTopicNameLength = 128;
inline constexpr std::size_t kMaxTypeNameLength = 128;
inline constexpr std::size_t kMaxDomainNameLength = 32;

// Ring capacity: a power of two in [1, kMaxCapacity].
inline constexpr std::uint32_t kMaxCapacity = 65536;
inline constexpr std::uint32_t kMaxPublishers = 1024;
inline constexpr std::uint32_t kMaxSubscribers = 1024;
inline constexpr std::uint32_t kMaxLoans = 65536;
// A subscriber keeps the buffers it knows free in one 64-bit mask and one
// released flag per buffer (core/include/ferry/detail/held_samples.hpp); 63 keeps the mask
// and the per-buffer arrays small.
inline constexpr std::uint32_t kMaxHeld = 63;

// Every *_ms value is at most one day: longer is a unit mistake.
inline constexpr std::uint32_t kMaxMillis = 86'400'000;

// `limits:`: node slots are the pool's 16-bit owner ids (0 is nobody).
inline constexpr std::uint32_t kMaxNodes = 65535;
inline constexpr std::uint32_t kMaxTopics = 1'000'000;
inline constexpr std::uint32_t kMaxPortsPerNode = 65536;
inline constexpr std::uint32_t kMaxConnections = 1'000'000;

// Pool: chunks per class (chunk indices are 32-bit), and the smallest chunk
// the planner uses (a cache line).
inline constexpr std::uint64_t kMaxPoolChunks = 0xFFFF'FFFF;
inline constexpr std::uint64_t kMinChunkSize = 64;

// Largest configuration file read. Real ones are a few KiB; the limit keeps
// `--config /dev/zero`-like mistakes from growing the reader without end.
inline constexpr std::uint64_t kMaxConfigFileSize = std::uint64_t{4} << 20;  // 4 MiB

// Size classes of the loaned-memory pool (its shared header has room for
// this many; discovery/daemon/domain_pool.cpp asserts they agree).
inline constexpr std::size_t kMaxPoolClasses = 32;

// YAML nodes of the configuration as its readers see them, an alias counted
// as a copy of its anchor's node: without it a 0.5 MiB file of aliases reads
// as 100 million nodes (minutes and gigabytes). Real files have thousands.
inline constexpr std::uint64_t kMaxYamlNodes = 1'000'000;

// Deepest chain of nested types: a type with only primitive fields is 1
// level, one that holds it is 2, and so on. The CLI's sample codecs recurse
// once per level, so the limit bounds their stack.
inline constexpr std::size_t kMaxTypeNesting = 32;

// Problems reported at once (then one line says how many more there are),
// and "did you mean" suggestions computed per file: each costs an edit
// distance against every candidate, so an unbounded number is quadratic.
inline constexpr std::size_t kMaxReportedProblems = 100;
inline constexpr std::size_t kMaxSuggestions = 100;

}  // namespace ferry::config

#pragma once
// A named shared-memory segment (POSIX shm via Boost.Interprocess) with a
// 64-byte header: magic, kind, layout version, total size, creator pid.
//
// Creation protocol: create (exclusive) -> truncate -> map -> write the header
// except the magic -> caller fills payload() -> seal(), which stores the magic
// with release. An opener waits (bounded) until the object exists, is at
// least a header long and has its magic; it checks the object's real size
// BEFORE touching the mapping (no SIGBUS), then magic, kind, version and that
// the recorded size is the real size. Nothing here throws.

#include <sys/types.h>

#include <atomic>
#include <boost/interprocess/mapped_region.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "ferry/transport/object_trust.hpp"
#include "ferry/transport/platform.hpp"

namespace ferry::transport {

// What a segment holds; an opener states what it expects. Values are stable
// (they are stored in shared memory); add new kinds with new values.
enum class SegmentKind : std::uint32_t {
  Ring = 0x474e4952,       // "RING"
  Pool = 0x4c4f4f50,       // "POOL"
  Registry = 0x47455252,   // "RREG"
  Doorbells = 0x4c4c4244,  // "DBLL"
  Test = 0x54534554,       // "TEST"
};

enum class SegmentError : std::uint8_t {
  NotFound,          // no object of that name (still none at the end of the wait)
  NotReady,          // it exists but its creator did not seal it within the wait
  TooSmall,          // smaller than the segment header: not a ferry segment
  BadMagic,          // the magic is not ferry's: not a ferry segment, or corrupted
  VersionMismatch,   // built by a different layout version of ferry
  KindMismatch,      // a different kind of segment than the caller expects
  SizeMismatch,      // the header's size is not the object's real size
  AlreadyExists,     // create: the name is taken (pass remove_stale to replace it)
  PermissionDenied,  // the object's mode refuses us
  Untrusted,         // owned by another uid, or mode wider than the opener allows
  InvalidArgument,   // bad name (empty, '/', too long) or size
  SystemError,       // anything else from the OS (out of memory, no space ...)
};

[[nodiscard]] std::string_view to_string(SegmentError e) noexcept;

// The first 64 bytes of every segment.
struct alignas(kCacheLine) SegmentHeader {
  std::atomic<std::uint64_t> magic;  // written last, by seal(), with release
  std::uint32_t kind;                // SegmentKind
  std::uint32_t layout_version;      // of the payload's layout, owned by the kind
  std::uint64_t total_size;          // header + payload, == the object's size
  std::uint32_t creator_pid;
  std::uint32_t header_size;  // offset of the payload (64)
  std::uint64_t payload_size;
  std::uint8_t reserved[24];
};
static_assert(sizeof(SegmentHeader) == kCacheLine);
static_assert(offsetof(SegmentHeader, magic) == 0);
static_assert(offsetof(SegmentHeader, kind) == 8);
static_assert(offsetof(SegmentHeader, layout_version) == 12);
static_assert(offsetof(SegmentHeader, total_size) == 16);
static_assert(offsetof(SegmentHeader, creator_pid) == 24);
static_assert(offsetof(SegmentHeader, header_size) == 28);
static_assert(offsetof(SegmentHeader, payload_size) == 32);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

inline constexpr std::uint64_t kSegmentMagic = 0x4745535952524546ULL;  // "FERRYSEG" little-endian

struct SegmentCreateOptions {
  bool remove_stale = false;             // remove an existing object of that name first
  mode_t mode = 0600;                    // applied with fchmod: the umask does not matter
  gid_t group = static_cast<gid_t>(-1);  // given to this group (fchown); -1: the creator's
};

enum class SegmentAccess : std::uint8_t { ReadWrite, ReadOnly };

class Segment {
 public:
  // Exclusive create of `name` (e.g. shm_name(domain, "ring.3")) with room
  // for `payload_bytes` after the header. The payload is zero-filled; fill it,
  // then seal().
  [[nodiscard]] static std::expected<Segment, SegmentError> create(
      std::string_view name, SegmentKind kind, std::uint32_t layout_version,
      std::size_t payload_bytes, SegmentCreateOptions options = {}) noexcept;

  // Opens an existing segment, waiting up to `wait_timeout` for its creator
  // to create, size and seal it (polls with short sleeps). With `owner`, an
  // object of another uid or with a wider mode is Untrusted (fstat, before
  // mapping; untrusted_name() says why in a sentence).
  [[nodiscard]] static std::expected<Segment, SegmentError> open(
      std::string_view name, SegmentKind kind, std::uint32_t layout_version,
      std::chrono::milliseconds wait_timeout, SegmentAccess access = SegmentAccess::ReadWrite,
      std::optional<ObjectOwner> owner = std::nullopt) noexcept;

  // Removes the name (mappings stay valid until unmapped). True if it existed.
  static bool remove(std::string_view name) noexcept;

  Segment(Segment&&) noexcept = default;
  Segment& operator=(Segment&&) noexcept = default;
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;
  ~Segment() = default;

  // Publishes the segment: stores the magic with release. Creator only, once.
  void seal() noexcept;

  // Starts 64 bytes into the mapping (64-byte aligned).
  [[nodiscard]] std::byte* payload() noexcept { return base() + kPayloadOffset; }
  [[nodiscard]] const std::byte* payload() const noexcept { return base() + kPayloadOffset; }
  [[nodiscard]] std::size_t payload_size() const noexcept {
    return region_.get_size() - kPayloadOffset;
  }
  [[nodiscard]] std::size_t total_size() const noexcept { return region_.get_size(); }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] bool read_only() const noexcept { return access_ == SegmentAccess::ReadOnly; }
  [[nodiscard]] const SegmentHeader& header() const noexcept {
    return *reinterpret_cast<const SegmentHeader*>(base());
  }

  static constexpr std::size_t kPayloadOffset = sizeof(SegmentHeader);

 private:
  Segment(std::string name, boost::interprocess::mapped_region region,
          SegmentAccess access) noexcept;
  [[nodiscard]] std::byte* base() const noexcept {
    return static_cast<std::byte*>(region_.get_address());
  }

  std::string name_;
  boost::interprocess::mapped_region region_;
  SegmentAccess access_ = SegmentAccess::ReadWrite;
};

}  // namespace ferry::transport

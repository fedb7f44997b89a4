#include "ferry/transport/segment.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <boost/interprocess/exceptions.hpp>
#include <boost/interprocess/shared_memory_object.hpp>
#include <cerrno>
#include <new>
#include <thread>
#include <utility>

namespace ferry::transport {

namespace bip = boost::interprocess;

std::string_view to_string(SegmentError e) noexcept {
  switch (e) {
    case SegmentError::NotFound:
      return "shared-memory segment not found";
    case SegmentError::NotReady:
      return "shared-memory segment exists but its creator did not finish it in time";
    case SegmentError::TooSmall:
      return "shared-memory object is smaller than a segment header";
    case SegmentError::BadMagic:
      return "shared-memory object is not a ferry segment (bad magic)";
    case SegmentError::VersionMismatch:
      return "shared-memory segment has another layout version (mixed ferry versions?)";
    case SegmentError::KindMismatch:
      return "shared-memory segment is of another kind than expected";
    case SegmentError::SizeMismatch:
      return "shared-memory segment's recorded size differs from its real size";
    case SegmentError::AlreadyExists:
      return "shared-memory segment already exists (remove the stale one first)";
    case SegmentError::PermissionDenied:
      return "permission denied on the shared-memory segment";
    case SegmentError::Untrusted:
      return "shared-memory segment is owned by another user or has a wider mode than expected";
    case SegmentError::InvalidArgument:
      return "invalid segment name or size";
    case SegmentError::SystemError:
      return "system error on the shared-memory segment";
  }
  return "unknown segment error";
}

namespace {

constexpr std::size_t kMaxNameLength = 250;                // NAME_MAX minus the leading '/'
constexpr std::size_t kMaxPayload = std::size_t{1} << 40;  // 1 TiB: anything larger is a bug

bool valid_name(std::string_view name) noexcept {
  return !name.empty() && name.size() <= kMaxNameLength &&
         name.find('/') == std::string_view::npos && name.find('\0') == std::string_view::npos;
}

SegmentError from_errno(int err) noexcept {
  switch (err) {
    case ENOENT:
      return SegmentError::NotFound;
    case EEXIST:
      return SegmentError::AlreadyExists;
    case EACCES:
    case EPERM:
      return SegmentError::PermissionDenied;
    case EINVAL:
    case ENAMETOOLONG:
      return SegmentError::InvalidArgument;
    default:
      return SegmentError::SystemError;
  }
}

SegmentError from_exception(const bip::interprocess_exception& e) noexcept {
  if (e.get_native_error() != 0) return from_errno(e.get_native_error());
  switch (e.get_error_code()) {
    case bip::not_found_error:
    case bip::not_such_file_or_directory:
      return SegmentError::NotFound;
    case bip::already_exists_error:
      return SegmentError::AlreadyExists;
    case bip::security_error:
      return SegmentError::PermissionDenied;
    case bip::invalid_argument:
      return SegmentError::InvalidArgument;
    default:
      return SegmentError::SystemError;
  }
}

// Removes a half-created object unless dismissed (creation failed midway).
class RemoveOnFailure {
 public:
  explicit RemoveOnFailure(const std::string& name) : name_(name) {}
  ~RemoveOnFailure() {
    if (armed_) bip::shared_memory_object::remove(name_.c_str());
  }
  RemoveOnFailure(const RemoveOnFailure&) = delete;
  RemoveOnFailure& operator=(const RemoveOnFailure&) = delete;
  void dismiss() noexcept { armed_ = false; }

 private:
  const std::string& name_;
  bool armed_ = true;
};

}  // namespace

Segment::Segment(std::string name, bip::mapped_region region, SegmentAccess access) noexcept
    : name_(std::move(name)), region_(std::move(region)), access_(access) {}

std::expected<Segment, SegmentError> Segment::create(std::string_view name, SegmentKind kind,
                                                     std::uint32_t layout_version,
                                                     std::size_t payload_bytes,
                                                     SegmentCreateOptions options) noexcept {
  if (!valid_name(name) || payload_bytes > kMaxPayload) {
    return std::unexpected(SegmentError::InvalidArgument);
  }
  try {
    const std::string n(name);
    if (options.remove_stale) bip::shared_memory_object::remove(n.c_str());
    // O_CREAT | O_EXCL: exactly one creator.
    bip::shared_memory_object shm(bip::create_only, n.c_str(), bip::read_write,
                                  bip::permissions(static_cast<unsigned>(options.mode)));
    RemoveOnFailure guard(n);
    // shm_open applies the umask; set the mode we were asked for.
    if (::fchmod(shm.get_mapping_handle().handle, options.mode) != 0) {
      return std::unexpected(from_errno(errno));
    }
    if (options.group != static_cast<gid_t>(-1) &&
        ::fchown(shm.get_mapping_handle().handle, static_cast<uid_t>(-1), options.group) != 0) {
      return std::unexpected(from_errno(errno));
    }
    const std::size_t total = kPayloadOffset + payload_bytes;
    shm.truncate(static_cast<bip::offset_t>(total));  // zero-filled
    bip::mapped_region region(shm, bip::read_write, 0, total);
    auto* header = static_cast<SegmentHeader*>(region.get_address());
    // Everything but the magic; seal() publishes the segment.
    header->kind = static_cast<std::uint32_t>(kind);
    header->layout_version = layout_version;
    header->total_size = total;
    header->creator_pid = static_cast<std::uint32_t>(::getpid());
    header->header_size = static_cast<std::uint32_t>(kPayloadOffset);
    header->payload_size = payload_bytes;
    guard.dismiss();
    return Segment(n, std::move(region), SegmentAccess::ReadWrite);
  } catch (const bip::interprocess_exception& e) {
    return std::unexpected(from_exception(e));
  } catch (...) {  // std::bad_alloc and friends: nothing leaves the transport as an exception
    return std::unexpected(SegmentError::SystemError);
  }
}

void Segment::seal() noexcept {
  auto* header = reinterpret_cast<SegmentHeader*>(base());
  // SYNC: release, pairs with the acquire load of magic in Segment::open: an
  // opener that sees the magic sees the header and the payload written before.
  header->magic.store(kSegmentMagic, std::memory_order_release);
}

std::expected<Segment, SegmentError> Segment::open(std::string_view name, SegmentKind kind,
                                                   std::uint32_t layout_version,
                                                   std::chrono::milliseconds wait_timeout,
                                                   SegmentAccess access,
                                                   std::optional<ObjectOwner> owner) noexcept {
  if (!valid_name(name)) return std::unexpected(SegmentError::InvalidArgument);
  const auto deadline = std::chrono::steady_clock::now() + wait_timeout;
  const auto mode = access == SegmentAccess::ReadOnly ? bip::read_only : bip::read_write;
  try {
    const std::string n(name);
    while (true) {
      // Why we are still waiting, reported when the wait ends.
      SegmentError pending = SegmentError::NotFound;
      try {
        bip::shared_memory_object shm(bip::open_only, n.c_str(), mode);
        // Whose it is, before anything of it is believed.
        if (owner && untrusted_descriptor(shm.get_mapping_handle().handle, n, *owner)) {
          return std::unexpected(SegmentError::Untrusted);
        }
        // The object's real size, from fstat, BEFORE mapping: touching a
        // mapping beyond the end of the object raises SIGBUS.
        bip::offset_t size = 0;
        if (!shm.get_size(size)) return std::unexpected(from_errno(errno));
        if (size == 0) {
          pending = SegmentError::NotReady;  // created, not yet truncated
        } else if (static_cast<std::uint64_t>(size) < sizeof(SegmentHeader)) {
          return std::unexpected(SegmentError::TooSmall);
        } else {
          const auto real_size = static_cast<std::size_t>(size);
          bip::mapped_region region(shm, mode, 0, real_size);
          const auto* header = static_cast<const SegmentHeader*>(region.get_address());
          // SYNC: acquire, pairs with the release store in Segment::seal.
          const std::uint64_t magic = header->magic.load(std::memory_order_acquire);
          if (magic == 0) {
            pending = SegmentError::NotReady;  // sized, not yet sealed
          } else if (magic != kSegmentMagic) {
            return std::unexpected(SegmentError::BadMagic);
          } else if (header->kind != static_cast<std::uint32_t>(kind)) {
            return std::unexpected(SegmentError::KindMismatch);
          } else if (header->layout_version != layout_version) {
            return std::unexpected(SegmentError::VersionMismatch);
          } else if (header->total_size != real_size || header->header_size != kPayloadOffset ||
                     header->payload_size != real_size - kPayloadOffset) {
            return std::unexpected(SegmentError::SizeMismatch);
          } else {
            return Segment(n, std::move(region), access);
          }
        }
      } catch (const bip::interprocess_exception& e) {
        const SegmentError err = from_exception(e);
        if (err != SegmentError::NotFound) return std::unexpected(err);
      }
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) return std::unexpected(pending);
      // Creation takes microseconds; a 1 ms poll keeps openers cheap and prompt.
      std::this_thread::sleep_for(
          std::min<std::chrono::nanoseconds>(deadline - now, std::chrono::milliseconds(1)));
    }
  } catch (...) {
    return std::unexpected(SegmentError::SystemError);
  }
}

bool Segment::remove(std::string_view name) noexcept {
  if (!valid_name(name)) return false;
  try {
    return bip::shared_memory_object::remove(std::string(name).c_str());
  } catch (...) {
    return false;
  }
}

}  // namespace ferry::transport

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <type_traits>

#include "ferry/transport/names.hpp"
#include "ferry/transport/segment.hpp"
#include "privileges.hpp"
#include "test_domain.hpp"

using namespace ferry::transport;
using ferry::test::TestDomain;
using namespace std::chrono_literals;

namespace {
constexpr std::uint32_t kVersion = 7;

std::string path_of(const std::string& name) { return "/" + name; }

// Writes `bytes` over the object at `offset` (simulates a broken or foreign writer).
void poke(const std::string& name, std::size_t offset, const void* bytes, std::size_t n) {
  const int fd = ::shm_open(path_of(name).c_str(), O_RDWR, 0);
  REQUIRE(fd >= 0);
  struct stat st {};
  REQUIRE(::fstat(fd, &st) == 0);
  void* p = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ | PROT_WRITE,
                   MAP_SHARED, fd, 0);
  REQUIRE(p != MAP_FAILED);
  std::memcpy(static_cast<char*>(p) + offset, bytes, n);
  ::munmap(p, static_cast<std::size_t>(st.st_size));
  ::close(fd);
}
}  // namespace

static_assert(!std::is_copy_constructible_v<Segment> &&
                  std::is_nothrow_move_constructible_v<Segment>,
              "a Segment owns its mapping: move-only");

TEST_CASE("a sealed segment opens with its payload, kind, version and size") {
  TestDomain domain;
  const auto name = shm_name(domain.name(), "seg");
  auto created = Segment::create(name, SegmentKind::Test, kVersion, 1000);
  REQUIRE(created.has_value());
  CHECK(reinterpret_cast<std::uintptr_t>(created->payload()) % kCacheLine == 0);
  CHECK(created->payload_size() == 1000);
  CHECK(created->total_size() == 1064);
  std::memcpy(created->payload(), "hello", 5);
  created->seal();

  auto opened = Segment::open(name, SegmentKind::Test, kVersion, 0ms);
  REQUIRE(opened.has_value());
  CHECK(opened->payload_size() == 1000);
  CHECK(std::memcmp(opened->payload(), "hello", 5) == 0);
  CHECK(opened->header().creator_pid == static_cast<std::uint32_t>(::getpid()));
  CHECK(opened->header().kind == static_cast<std::uint32_t>(SegmentKind::Test));

  auto read_only = Segment::open(name, SegmentKind::Test, kVersion, 0ms, SegmentAccess::ReadOnly);
  REQUIRE(read_only.has_value());
  CHECK(read_only->read_only());
  CHECK(std::memcmp(read_only->payload(), "hello", 5) == 0);

  Segment moved = std::move(*opened);
  CHECK(std::memcmp(moved.payload(), "hello", 5) == 0);
  CHECK(Segment::remove(name));
  CHECK_FALSE(Segment::remove(name));
}

TEST_CASE("create is exclusive unless told to remove a stale segment") {
  TestDomain domain;
  const auto name = shm_name(domain.name(), "seg");
  auto first = Segment::create(name, SegmentKind::Test, kVersion, 64);
  REQUIRE(first.has_value());
  auto second = Segment::create(name, SegmentKind::Test, kVersion, 64);
  REQUIRE_FALSE(second.has_value());
  CHECK(second.error() == SegmentError::AlreadyExists);
  CHECK_FALSE(to_string(second.error()).empty());
  auto replaced = Segment::create(name, SegmentKind::Test, kVersion, 128, {.remove_stale = true});
  REQUIRE(replaced.has_value());
  CHECK(replaced->payload_size() == 128);
}

TEST_CASE("a segment gets the requested mode whatever the umask") {
  TestDomain domain;
  const auto name = shm_name(domain.name(), "seg");
  const mode_t old_umask = ::umask(0077);
  auto seg = Segment::create(name, SegmentKind::Test, kVersion, 64, {.mode = 0660});
  ::umask(old_umask);
  REQUIRE(seg.has_value());
  struct stat st {};
  REQUIRE(::stat(("/dev/shm/" + name).c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0660);
}

TEST_CASE("invalid names are refused") {
  CHECK(Segment::create("", SegmentKind::Test, kVersion, 64).error() ==
        SegmentError::InvalidArgument);
  CHECK(Segment::create("a/b", SegmentKind::Test, kVersion, 64).error() ==
        SegmentError::InvalidArgument);
  CHECK(Segment::open(std::string(300, 'x'), SegmentKind::Test, kVersion, 0ms).error() ==
        SegmentError::InvalidArgument);
}

TEST_CASE("opening a segment that does not exist times out with NotFound") {
  TestDomain domain;
  const auto start = std::chrono::steady_clock::now();
  auto r = Segment::open(shm_name(domain.name(), "nothing"), SegmentKind::Test, kVersion, 30ms);
  const auto waited = std::chrono::steady_clock::now() - start;
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error() == SegmentError::NotFound);
  CHECK(waited >= 30ms);
  CHECK(waited < 2s);
}

TEST_CASE("open before the creator sealed waits, then times out with NotReady") {
  TestDomain domain;
  const auto name = shm_name(domain.name(), "seg");
  auto seg = Segment::create(name, SegmentKind::Test, kVersion, 64);
  REQUIRE(seg.has_value());
  const auto start = std::chrono::steady_clock::now();
  auto r = Segment::open(name, SegmentKind::Test, kVersion, 50ms);
  const auto waited = std::chrono::steady_clock::now() - start;
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error() == SegmentError::NotReady);
  CHECK(waited >= 50ms);
  CHECK(waited < 2s);
}

TEST_CASE("open of an object not yet sized waits, then times out with NotReady") {
  TestDomain domain;
  const auto name = shm_name(domain.name(), "seg");
  const int fd = ::shm_open(path_of(name).c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);  // size 0
  REQUIRE(fd >= 0);
  ::close(fd);
  auto r = Segment::open(name, SegmentKind::Test, kVersion, 20ms);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error() == SegmentError::NotReady);
}

TEST_CASE("open before the creator sealed succeeds when it seals in time") {
  TestDomain domain;
  const auto name = shm_name(domain.name(), "seg");
  auto seg = Segment::create(name, SegmentKind::Test, kVersion, 64);
  REQUIRE(seg.has_value());
  std::thread creator([&] {
    std::this_thread::sleep_for(50ms);
    std::memcpy(seg->payload(), "ready", 5);
    seg->seal();
  });
  const auto start = std::chrono::steady_clock::now();
  auto r = Segment::open(name, SegmentKind::Test, kVersion, 5s);
  const auto waited = std::chrono::steady_clock::now() - start;
  creator.join();
  REQUIRE(r.has_value());
  CHECK(std::memcmp(r->payload(), "ready", 5) ==
        0);  // the payload written before seal() is visible
  CHECK(waited >= 40ms);
  CHECK(waited < 4s);
}

TEST_CASE("a segment with a foreign magic is refused with BadMagic") {
  TestDomain domain;
  const auto name = shm_name(domain.name(), "seg");
  auto seg = Segment::create(name, SegmentKind::Test, kVersion, 64);
  REQUIRE(seg.has_value());
  seg->seal();
  const std::uint64_t bad = 0x1122334455667788ULL;
  poke(name, offsetof(SegmentHeader, magic), &bad, sizeof bad);
  auto r = Segment::open(name, SegmentKind::Test, kVersion, 1s);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error() == SegmentError::BadMagic);
}

TEST_CASE("a segment of another layout version is refused with VersionMismatch") {
  TestDomain domain;
  const auto name = shm_name(domain.name(), "seg");
  auto seg = Segment::create(name, SegmentKind::Test, kVersion + 1, 64);
  REQUIRE(seg.has_value());
  seg->seal();
  auto r = Segment::open(name, SegmentKind::Test, kVersion, 1s);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error() == SegmentError::VersionMismatch);
}

TEST_CASE("a segment of another kind is refused with KindMismatch") {
  TestDomain domain;
  const auto name = shm_name(domain.name(), "seg");
  auto seg = Segment::create(name, SegmentKind::Pool, kVersion, 64);
  REQUIRE(seg.has_value());
  seg->seal();
  auto r = Segment::open(name, SegmentKind::Ring, kVersion, 1s);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error() == SegmentError::KindMismatch);
}

TEST_CASE("a segment whose real size differs from its header is refused with SizeMismatch") {
  TestDomain domain;
  const auto name = shm_name(domain.name(), "seg");
  auto seg = Segment::create(name, SegmentKind::Test, kVersion, 4096);
  REQUIRE(seg.has_value());
  seg->seal();
  SUBCASE("grown") {
    const int fd = ::shm_open(path_of(name).c_str(), O_RDWR, 0);
    REQUIRE(fd >= 0);
    REQUIRE(::ftruncate(fd, 8192 + 64) == 0);
    ::close(fd);
  }
  SUBCASE("header lies") {
    const std::uint64_t lie = 1 << 20;
    poke(name, offsetof(SegmentHeader, total_size), &lie, sizeof lie);
  }
  auto r = Segment::open(name, SegmentKind::Test, kVersion, 1s);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error() == SegmentError::SizeMismatch);
}

TEST_CASE("an object shorter than a segment header is refused with TooSmall, without SIGBUS") {
  TestDomain domain;
  const auto name = shm_name(domain.name(), "seg");
  const int fd = ::shm_open(path_of(name).c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  REQUIRE(fd >= 0);
  REQUIRE(::ftruncate(fd, 10) == 0);
  ::close(fd);
  auto r = Segment::open(name, SegmentKind::Test, kVersion, 1s);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error() == SegmentError::TooSmall);
}

TEST_CASE("an object shrunk under its header's size is refused, without SIGBUS") {
  TestDomain domain;
  const auto name = shm_name(domain.name(), "seg");
  auto seg = Segment::create(name, SegmentKind::Test, kVersion, 1 << 16);
  REQUIRE(seg.has_value());
  seg->seal();
  const int fd = ::shm_open(path_of(name).c_str(), O_RDWR, 0);
  REQUIRE(fd >= 0);
  REQUIRE(::ftruncate(fd, 4096) == 0);  // the header page stays, the rest is gone
  ::close(fd);
  auto r = Segment::open(name, SegmentKind::Test, kVersion, 1s);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error() == SegmentError::SizeMismatch);
}

TEST_CASE("a segment the caller may not open is refused with PermissionDenied") {
  TestDomain domain;
  const auto name = shm_name(domain.name(), "seg");
  auto seg = Segment::create(name, SegmentKind::Test, kVersion, 64, {.mode = 0400});
  REQUIRE(seg.has_value());
  seg->seal();
  // Root may open anything: the caller is a child that dropped root.
  enum : int { kRefused = 0, kOpened = 1, kOtherError = 2, kStillRoot = 3 };
  ferry::test::Child caller([&] {
    if (!ferry::test::drop_root()) return int{kStillRoot};
    auto r = Segment::open(name, SegmentKind::Test, kVersion, 0ms);
    if (r) return int{kOpened};
    return r.error() == SegmentError::PermissionDenied ? int{kRefused} : int{kOtherError};
  });
  CHECK(caller.wait() == kRefused);
}

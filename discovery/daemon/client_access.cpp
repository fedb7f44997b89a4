#include "client_access.hpp"

#include <fmt/format.h>
#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <vector>

namespace ferry::discovery {

namespace {

std::size_t lookup_buffer_size(int which) {
  const long hint = ::sysconf(which);
  return hint > 0 ? static_cast<std::size_t>(hint) : 16384;
}

}  // namespace

std::optional<std::string> refuse_client(uid_t uid, gid_t gid, const ClientAccessPolicy& policy,
                                         const GroupMembership& is_member) {
  // Root can open the domain's objects whatever their mode: refusing it here
  // would protect nothing.
  if (uid == policy.daemon_uid || uid == 0) return std::nullopt;
  if (!policy.group) {
    return fmt::format(
        "uid {} may not use domain '{}': its ferryd runs as uid {} and admits no other user "
        "(start ferryd with --group GROUP to admit a group's members)",
        uid, policy.domain, policy.daemon_uid);
  }
  const AdmittedGroup& group = *policy.group;
  if (gid == group.gid || (is_member && is_member(uid, group.gid))) return std::nullopt;
  return fmt::format(
      "uid {} (gid {}) may not use domain '{}': it is not a member of group '{}' (gid {}), "
      "the only group its ferryd (uid {}) admits",
      uid, gid, policy.domain, group.name, group.gid, policy.daemon_uid);
}

bool user_in_group(uid_t uid, gid_t gid) {
  std::vector<char> buffer(lookup_buffer_size(_SC_GETPW_R_SIZE_MAX));
  passwd entry{};
  passwd* found = nullptr;
  while (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == ERANGE) {
    buffer.resize(buffer.size() * 2);
  }
  if (found == nullptr) return false;
  if (entry.pw_gid == gid) return true;
  std::vector<gid_t> groups(64);
  int count = static_cast<int>(groups.size());
  while (::getgrouplist(entry.pw_name, entry.pw_gid, groups.data(), &count) < 0) {
    // `count` now says how many there are; grow at least twofold in case it
    // does not (older C libraries).
    groups.resize(std::max(static_cast<std::size_t>(count), groups.size() * 2));
    count = static_cast<int>(groups.size());
  }
  const auto end = groups.begin() + count;
  return std::find(groups.begin(), end, gid) != end;
}

std::expected<AdmittedGroup, std::string> find_group(const std::string& name) {
  std::vector<char> buffer(lookup_buffer_size(_SC_GETGR_R_SIZE_MAX));
  group entry{};
  group* found = nullptr;
  const auto lookup = [&](auto&& call) {
    int err = 0;
    while ((err = call()) == ERANGE) buffer.resize(buffer.size() * 2);
    return err;
  };
  // Some NSS modules say "not found" with ENOENT or ESRCH rather than 0.
  const auto not_found = [](int e) { return e == 0 || e == ENOENT || e == ESRCH; };
  int err = lookup(
      [&] { return ::getgrnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found); });
  if (found == nullptr && not_found(err) && !name.empty()) {
    gid_t gid = 0;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), gid);
    if (ec == std::errc{} && end == name.data() + name.size()) {
      err = lookup([&] { return ::getgrgid_r(gid, &entry, buffer.data(), buffer.size(), &found); });
    }
  }
  if (found == nullptr) {
    if (!not_found(err)) {
      return std::unexpected(
          fmt::format("cannot look up group '{}' given to --group: {}", name, std::strerror(err)));
    }
    return std::unexpected(fmt::format(
        "unknown group '{}' given to --group: no such group name or gid (see 'getent group')",
        name));
  }
  return AdmittedGroup{entry.gr_gid, entry.gr_name};
}

}  // namespace ferry::discovery

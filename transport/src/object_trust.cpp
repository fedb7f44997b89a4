#include "ferry/transport/object_trust.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "ferry/transport/names.hpp"

namespace ferry::transport {

namespace {

std::string octal(unsigned mode) {
  char text[16];
  std::snprintf(text, sizeof text, "%04o", mode);
  return text;
}

}  // namespace

std::optional<std::string> untrusted_object(const std::string& name, const struct stat& st,
                                            const ObjectOwner& owner) {
  const unsigned mode = st.st_mode & 07777;
  if (!S_ISREG(st.st_mode)) {
    return "/dev/shm/" + name + " is not a plain shared-memory object (mode " +
           octal(static_cast<unsigned>(st.st_mode)) + ", owner uid " + std::to_string(st.st_uid) +
           "); refusing it: remove it after checking who made it";
  }
  if (st.st_uid != owner.uid || (mode & ~static_cast<unsigned>(owner.max_mode)) != 0) {
    return "/dev/shm/" + name + " is owned by uid " + std::to_string(st.st_uid) + " with mode " +
           octal(mode) + ", expected uid " + std::to_string(owner.uid) + " and mode " +
           octal(static_cast<unsigned>(owner.max_mode)) +
           " at most; refusing it: another user may have made it or opened it (remove it after "
           "checking who did)";
  }
  return std::nullopt;
}

std::optional<std::string> untrusted_descriptor(int fd, const std::string& name,
                                                const ObjectOwner& owner) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return "cannot stat /dev/shm/" + name + ": " + std::strerror(errno);
  }
  return untrusted_object(name, st, owner);
}

std::optional<std::string> untrusted_name(const std::string& name, const ObjectOwner& owner) {
  struct stat st {};
  if (::lstat(("/dev/shm/" + name).c_str(), &st) != 0) return std::nullopt;  // gone meanwhile
  return untrusted_object(name, st, owner);
}

std::optional<std::string> first_untrusted_domain_object(const std::string& domain,
                                                         const ObjectOwner& owner) {
  for (const auto& name : list_domain_objects(domain)) {
    if (auto why = untrusted_name(name, owner)) return why;
  }
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> untrusted_domain_objects(
    const std::string& domain, const ObjectOwner& owner) {
  std::vector<std::pair<std::string, std::string>> found;
  for (auto& name : list_domain_objects(domain)) {
    if (auto why = untrusted_name(name, owner))
      found.emplace_back(std::move(name), std::move(*why));
  }
  return found;
}

std::size_t remove_trusted_domain_objects(const std::string& domain, const ObjectOwner& owner) {
  std::size_t removed = 0;
  const std::string lock = shm_name(domain, "lock");  // domain_lock_name()
  for (const auto& name : list_domain_objects(domain)) {
    if (name == lock || untrusted_name(name, owner)) continue;
    if (::shm_unlink(("/" + name).c_str()) == 0) ++removed;
  }
  return removed;
}

}  // namespace ferry::transport

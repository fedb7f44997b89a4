#include "ferry/transport/names.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace ferry::transport {

bool is_valid_domain(std::string_view domain) noexcept {
  if (domain.empty() || domain.size() > 32) return false;
  return std::all_of(domain.begin(), domain.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

std::string shm_prefix(std::string_view domain) {
  std::string prefix{"ferry."};
  prefix.append(domain);
  prefix.push_back('.');
  return prefix;
}

std::string shm_name(std::string_view domain, std::string_view what) {
  std::string name = shm_prefix(domain);
  name.append(what);
  return name;
}

std::vector<std::string> list_domain_objects(std::string_view domain) {
  std::vector<std::string> names;
  const std::string prefix = shm_prefix(domain);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm", ec)) {
    std::string name = entry.path().filename().string();
    if (name.starts_with(prefix)) names.push_back(std::move(name));
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::size_t remove_domain_objects(std::string_view domain, bool keep_lock) {
  std::size_t removed = 0;
  const std::string lock = shm_name(domain, "lock");  // domain_lock_name()
  for (const auto& name : list_domain_objects(domain)) {
    if (keep_lock && name == lock) continue;
    const std::string path = "/" + name;
    if (::shm_unlink(path.c_str()) == 0) ++removed;
  }
  return removed;
}

}  // namespace ferry::transport

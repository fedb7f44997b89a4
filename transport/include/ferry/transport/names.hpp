#pragma once
// Naming of a domain's shared-memory objects: every object of domain D is
// called "ferry.D.<what>", so that one prefix lists or removes them all.

#include <string>
#include <string_view>
#include <vector>

namespace ferry::transport {

// Domain names are [A-Za-z0-9_-]{1,32}; they end up in file names.
[[nodiscard]] bool is_valid_domain(std::string_view domain) noexcept;

// "ferry.<domain>." : the prefix shared by every object of the domain.
[[nodiscard]] std::string shm_prefix(std::string_view domain);

// "ferry.<domain>.<what>" (no leading slash; Boost.Interprocess adds it).
[[nodiscard]] std::string shm_name(std::string_view domain, std::string_view what);

// Names of the objects in /dev/shm that start with the domain's prefix.
[[nodiscard]] std::vector<std::string> list_domain_objects(std::string_view domain);

// Removes every object of the domain; returns how many were removed. With
// `keep_lock`, the domain's lock (domain_lock.hpp) stays: its holder
// removes it last, while still holding it.
std::size_t remove_domain_objects(std::string_view domain, bool keep_lock = false);

}  // namespace ferry::transport

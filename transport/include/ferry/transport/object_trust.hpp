#pragma once
// Whose is a shared-memory object? /dev/shm is shared by every local user
// and names are global: another uid can make an object under a domain's
// name before ferryd does (a denial) or leave one wide open (a takeover of
// what the next ferryd adopts). Only objects of the expected uid, with no
// mode bit beyond the expected ones, are trusted.

#include <sys/stat.h>
#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ferry::transport {

struct ObjectOwner {
  uid_t uid = 0;
  mode_t max_mode = 0600;  // no permission bit beyond these (0660 with --group)
};

// nullopt when `st` (of /dev/shm/<name>) is a regular object that `owner`
// allows; else one sentence naming the object, its owner and mode, and
// what was expected.
[[nodiscard]] std::optional<std::string> untrusted_object(const std::string& name,
                                                          const struct stat& st,
                                                          const ObjectOwner& owner);

// The same for an open descriptor of the object (fstat): no race with a
// rename between the check and the use.
[[nodiscard]] std::optional<std::string> untrusted_descriptor(int fd, const std::string& name,
                                                              const ObjectOwner& owner);

// The same for /dev/shm/<name> by its name (lstat); nullopt too when it is gone.
[[nodiscard]] std::optional<std::string> untrusted_name(const std::string& name,
                                                        const ObjectOwner& owner);

// The first object of the domain in /dev/shm that `owner` does not allow
// (lstat: a symlink is refused too); nullopt when all are trusted.
[[nodiscard]] std::optional<std::string> first_untrusted_domain_object(const std::string& domain,
                                                                       const ObjectOwner& owner);

// Every object of the domain in /dev/shm that `owner` does not allow, each
// with its sentence (as untrusted_object), in name order.
[[nodiscard]] std::vector<std::pair<std::string, std::string>> untrusted_domain_objects(
    const std::string& domain, const ObjectOwner& owner);

// Removes the domain's objects that `owner` allows, except its lock
// (domain_lock.hpp); another user's objects stay for the operator to look
// at. Returns how many were removed.
std::size_t remove_trusted_domain_objects(const std::string& domain, const ObjectOwner& owner);

}  // namespace ferry::transport

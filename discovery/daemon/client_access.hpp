#pragma once
// Who may use a domain: ferryd's decision on a connecting client's
// SO_PEERCRED. Its own uid (and root) always; with `--group G` also a client
// whose gid is G or whose uid is a member of G; nobody else.

#include <sys/types.h>

#include <expected>
#include <functional>
#include <optional>
#include <string>

namespace ferry::discovery {

// The group given to `ferryd --group`.
struct AdmittedGroup {
  gid_t gid = 0;
  std::string name;
};

struct ClientAccessPolicy {
  std::string domain;
  uid_t daemon_uid = 0;
  std::optional<AdmittedGroup> group;  // --group G
};

// Whether the user `uid` is a member of group `gid` (its primary group or a
// supplementary one).
using GroupMembership = std::function<bool(uid_t uid, gid_t gid)>;

// nullopt when the client (SO_PEERCRED uid and gid) may use the domain, else
// the one-sentence reason it may not, naming its uid. `is_member` is asked
// only when the policy admits a group and the client's gid is not it.
[[nodiscard]] std::optional<std::string> refuse_client(uid_t uid, gid_t gid,
                                                       const ClientAccessPolicy& policy,
                                                       const GroupMembership& is_member);

// The user database's answer (getpwuid_r, then getgrouplist): false for a
// uid that has no entry.
[[nodiscard]] bool user_in_group(uid_t uid, gid_t gid);

// The group `--group` names: a group name, or a numeric gid that exists.
// The error is one sentence naming it.
[[nodiscard]] std::expected<AdmittedGroup, std::string> find_group(const std::string& name);

}  // namespace ferry::discovery

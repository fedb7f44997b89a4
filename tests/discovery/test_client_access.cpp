// Which clients ferryd admits (refuse_client), with membership lookups
// injected: tests cannot switch users.
#include <doctest/doctest.h>
#include <grp.h>
#include <unistd.h>

#include <string>

#include "client_access.hpp"

using ferry::discovery::AdmittedGroup;
using ferry::discovery::ClientAccessPolicy;
using ferry::discovery::find_group;
using ferry::discovery::refuse_client;
using ferry::discovery::user_in_group;

namespace {

constexpr uid_t kDaemonUid = 1000;
constexpr uid_t kOtherUid = 1001;
constexpr gid_t kVideo = 44;
constexpr gid_t kUsers = 100;

ClientAccessPolicy without_group() { return {"cam", kDaemonUid, std::nullopt}; }
ClientAccessPolicy with_video() { return {"cam", kDaemonUid, AdmittedGroup{kVideo, "video"}}; }

bool member_of_nothing(uid_t, gid_t) { return false; }

bool contains(const std::optional<std::string>& text, const std::string& part) {
  return text && text->find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("the daemon's own uid and root are admitted with or without a group") {
  for (const auto& policy : {without_group(), with_video()}) {
    CHECK_FALSE(refuse_client(kDaemonUid, kUsers, policy, member_of_nothing));
    CHECK_FALSE(refuse_client(0, 0, policy, member_of_nothing));
  }
}

TEST_CASE("without --group another uid is refused with a sentence naming it and the fix") {
  bool asked = false;
  const auto refused = refuse_client(kOtherUid, kVideo, without_group(), [&](uid_t, gid_t) {
    asked = true;
    return true;
  });
  CHECK_FALSE(asked);  // no group admitted: membership does not matter
  CHECK(contains(refused, "uid 1001 may not use domain 'cam'"));
  CHECK(contains(refused, "runs as uid 1000"));
  CHECK(contains(refused, "--group"));
}

TEST_CASE("with --group a client whose gid is the group is admitted without a lookup") {
  bool asked = false;
  const auto refused = refuse_client(kOtherUid, kVideo, with_video(), [&](uid_t, gid_t) {
    asked = true;
    return false;
  });
  CHECK_FALSE(refused);
  CHECK_FALSE(asked);
}

TEST_CASE("with --group a uid that is a member of the group is admitted whatever its gid") {
  uid_t asked_uid = 0;
  gid_t asked_gid = 0;
  const auto refused = refuse_client(kOtherUid, kUsers, with_video(), [&](uid_t uid, gid_t gid) {
    asked_uid = uid;
    asked_gid = gid;
    return true;
  });
  CHECK_FALSE(refused);
  CHECK(asked_uid == kOtherUid);
  CHECK(asked_gid == kVideo);
}

TEST_CASE("with --group a uid outside the group is refused, naming its uid and the group") {
  const auto refused = refuse_client(kOtherUid, kUsers, with_video(), member_of_nothing);
  CHECK(contains(refused, "uid 1001 (gid 100) may not use domain 'cam'"));
  CHECK(contains(refused, "group 'video' (gid 44)"));
  // An empty lookup counts as "not a member", never as a crash.
  CHECK(refuse_client(kOtherUid, kUsers, with_video(), {}).has_value());
}

TEST_CASE("user_in_group reads the user database: our primary group, never an unknown uid") {
  CHECK(user_in_group(::getuid(), ::getgid()));
  CHECK_FALSE(user_in_group(static_cast<uid_t>(4000000000U), ::getgid()));
}

TEST_CASE("find_group takes a group name or an existing gid and names an unknown one") {
  const group* ours = ::getgrgid(::getgid());
  REQUIRE(ours != nullptr);
  const std::string name = ours->gr_name;
  const auto by_name = find_group(name);
  REQUIRE(by_name.has_value());
  CHECK(by_name->gid == ::getgid());
  CHECK(by_name->name == name);
  const auto by_gid = find_group(std::to_string(::getgid()));
  REQUIRE(by_gid.has_value());
  CHECK(by_gid->name == name);

  const auto unknown = find_group("no-such-group-ferry");
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().find("unknown group 'no-such-group-ferry' given to --group") !=
        std::string::npos);
  CHECK_FALSE(find_group("").has_value());
}

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "ferry/discovery/paths.hpp"
#include "privileges.hpp"
#include "test_domain.hpp"

using namespace ferry::discovery;
namespace fs = std::filesystem;

namespace {

// Sets (or unsets) an environment variable for one scope, then restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

}  // namespace

TEST_CASE("the domain comes from --domain, then FERRY_DOMAIN, then the config, then 'default'") {
  {
    ScopedEnv env{"FERRY_DOMAIN", "fromenv"};
    CHECK(resolve_domain("fromcli", "fromconfig").value() == "fromcli");
    CHECK(resolve_domain(std::nullopt, "fromconfig").value() == "fromenv");
  }
  {
    ScopedEnv env{"FERRY_DOMAIN", std::nullopt};
    CHECK(resolve_domain(std::nullopt, "fromconfig").value() == "fromconfig");
    CHECK(resolve_domain(std::nullopt, std::nullopt).value() == "default");
  }
  {
    ScopedEnv env{"FERRY_DOMAIN", ""};  // empty counts as unset
    CHECK(resolve_domain(std::nullopt, "fromconfig").value() == "fromconfig");
  }
}

TEST_CASE("an invalid domain name is an error quoting the name, its source and the pattern") {
  ScopedEnv env{"FERRY_DOMAIN", std::nullopt};
  const auto cli = resolve_domain("a.b", std::nullopt);
  REQUIRE_FALSE(cli.has_value());
  CHECK(cli.error().code == PathErrorCode::InvalidDomain);
  CHECK(cli.error().message ==
        "domain name 'a.b' (from --domain) is invalid: use 1 to 32 characters from [A-Za-z0-9_-]");
  CHECK_FALSE(resolve_domain("", std::nullopt).has_value());
  CHECK_FALSE(resolve_domain(std::string(33, 'a'), std::nullopt).has_value());

  const auto config = resolve_domain(std::nullopt, "with space");
  REQUIRE_FALSE(config.has_value());
  CHECK(config.error().message.find("'with space'") != std::string::npos);
  CHECK(config.error().message.find("config") != std::string::npos);

  ScopedEnv bad{"FERRY_DOMAIN", "../etc"};
  const auto from_env = resolve_domain(std::nullopt, "fine");
  REQUIRE_FALSE(from_env.has_value());
  CHECK(from_env.error().message.find("FERRY_DOMAIN") != std::string::npos);
}

TEST_CASE(
    "the runtime dir is FERRY_RUNTIME_DIR, then XDG_RUNTIME_DIR/ferry, then /tmp/ferry-<uid>") {
  {
    ScopedEnv ferry{"FERRY_RUNTIME_DIR", "/run/custom"};
    ScopedEnv xdg{"XDG_RUNTIME_DIR", "/run/user/1000"};
    CHECK(runtime_dir() == fs::path{"/run/custom"});
  }
  {
    ScopedEnv ferry{"FERRY_RUNTIME_DIR", std::nullopt};
    ScopedEnv xdg{"XDG_RUNTIME_DIR", "/run/user/1000"};
    CHECK(runtime_dir() == fs::path{"/run/user/1000/ferry"});
  }
  {
    ScopedEnv ferry{"FERRY_RUNTIME_DIR", ""};
    ScopedEnv xdg{"XDG_RUNTIME_DIR", "relative/ignored"};
    CHECK(runtime_dir() == fs::path{"/tmp/ferry-" + std::to_string(::getuid())});
  }
  {
    ScopedEnv ferry{"FERRY_RUNTIME_DIR", std::nullopt};
    ScopedEnv xdg{"XDG_RUNTIME_DIR", std::nullopt};
    CHECK(runtime_dir() == fs::path{"/tmp/ferry-" + std::to_string(::getuid())});
  }
}

TEST_CASE("ensure_runtime_dir creates the directory with mode 0700 whatever the umask") {
  ferry::test::TestDomain domain;
  const fs::path dir = domain.runtime_dir() / "nested" / "rt";
  ScopedEnv env{"FERRY_RUNTIME_DIR", dir.string()};
  const mode_t old_umask = ::umask(0);
  const auto made = ensure_runtime_dir();
  ::umask(old_umask);
  REQUIRE_MESSAGE(made.has_value(), made.error().message);
  CHECK(*made == dir);
  CHECK(fs::is_directory(dir));
  CHECK(mode_of(dir) == 0700);
  CHECK(ensure_runtime_dir().has_value());  // idempotent
}

TEST_CASE("ensure_runtime_dir refuses a directory others can write to") {
  ferry::test::TestDomain domain;
  const fs::path dir = domain.runtime_dir() / "open";
  fs::create_directory(dir);
  REQUIRE(::chmod(dir.c_str(), 0777) == 0);
  const auto made = ensure_runtime_dir(dir);
  REQUIRE_FALSE(made.has_value());
  CHECK(made.error().code == PathErrorCode::insecure_directory);
  CHECK(made.error().message.find(dir.string()) != std::string::npos);
  CHECK(mode_of(dir) == 0777);  // not silently "fixed"
}

TEST_CASE("ensure_runtime_dir refuses a directory owned by another user" *
          ferry::test::needs_root()) {
  ferry::test::TestDomain domain;
  const fs::path dir = domain.runtime_dir() / "theirs";
  fs::create_directory(dir);
  REQUIRE(::chown(dir.c_str(), ferry::test::kNobody, ferry::test::kNoGroup) == 0);
  const auto made = ensure_runtime_dir(dir);
  REQUIRE_FALSE(made.has_value());
  CHECK(made.error().code == PathErrorCode::insecure_directory);
  CHECK(made.error().message.find("uid 65534") != std::string::npos);
}

TEST_CASE("ensure_runtime_dir refuses a path that is not a directory") {
  ferry::test::TestDomain domain;
  const fs::path file = domain.runtime_dir() / "file";
  std::ofstream{file} << "x";
  const auto made = ensure_runtime_dir(file);
  REQUIRE_FALSE(made.has_value());
  CHECK(made.error().code == PathErrorCode::not_a_directory);
}

TEST_CASE("ensure_runtime_dir follows our own symlink to a directory of ours") {
  ferry::test::TestDomain domain;
  const fs::path target = domain.runtime_dir() / "target";
  fs::create_directory(target);
  fs::permissions(target, fs::perms::owner_all);
  const fs::path link = domain.runtime_dir() / "link";
  fs::create_directory_symlink(target, link);
  CHECK(ensure_runtime_dir(link).has_value());
}

TEST_CASE("the socket is <runtime_dir>/<domain>.sock") {
  CHECK(socket_path("demo", "/run/ferry").value() == fs::path{"/run/ferry/demo.sock"});
  ScopedEnv env{"FERRY_RUNTIME_DIR", "/somewhere"};
  CHECK(socket_path("demo").value() == fs::path{"/somewhere/demo.sock"});
  const auto bad = socket_path("no/slash", "/run/ferry");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().code == PathErrorCode::InvalidDomain);
}

TEST_CASE("a socket path longer than sun_path allows is a clear error") {
  CHECK(max_socket_path_length() == 107);
  const fs::path deep = "/" + std::string(100, 'd');
  const auto path = socket_path("domain", deep);
  REQUIRE_FALSE(path.has_value());
  CHECK(path.error().code == PathErrorCode::path_too_long);
  CHECK(path.error().message.find("FERRY_RUNTIME_DIR") != std::string::npos);
  // Exactly at the limit is fine: "/" + 99 + "/" + "d.sock" = 107 bytes.
  const fs::path edge = "/" + std::string(107 - 1 - 1 - 1 - 5, 'e');
  CHECK(socket_path("d", edge).value().native().size() == 107);
}

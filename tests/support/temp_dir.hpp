#pragma once
// A private directory for a test that needs files but no domain (a unit
// test): made fresh, removed with everything in it.

#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace ferry::test {

class TempDir {
 public:
  // $TMPDIR/ferry-<tag>-XXXXXX.
  explicit TempDir(const std::string& tag) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / ("ferry-" + tag + "-XXXXXX")).string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] std::filesystem::path operator/(const std::string& name) const {
    return path_ / name;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace ferry::test

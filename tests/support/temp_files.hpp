#pragma once
// Files a test writes (configs, inputs) into its domain's runtime directory,
// removed with it, and whole files read back.

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "test_domain.hpp"

namespace ferry::test {

// Writes `text` to `name` in the domain's runtime directory; returns its path.
inline std::string write_file(const TestDomain& domain, const std::string& name,
                              const std::string& text) {
  const auto path = domain.runtime_dir() / name;
  std::ofstream(path) << text;
  return path.string();
}

// The whole file, or "" when it cannot be read.
inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace ferry::test

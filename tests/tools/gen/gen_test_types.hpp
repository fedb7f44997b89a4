#pragma once
// The YAML of the `ferry gen cpp` golden test: every field type of
// all_types_yaml.hpp, plus an opaque type, a type in a package
// ("geo/Point": namespace geo) using it and a type declared before the
// type it nests (the header must still define that one first).

#include <doctest/doctest.h>

#include <string>

#include "../all_types_yaml.hpp"
#include "daemon_fixture.hpp"
#include "temp_files.hpp"
#include "test_domain.hpp"

namespace ferry::test {

inline std::string gen_test_yaml() {
  return std::string("types:\n") + kInnerAndAllTypes + R"(  geo/Point:
    fields:
      - { name: id, type: u16 }
      - { name: blob, type: Blob }
      - { name: blobs, type: "Blob[2]" }
      - { name: inner, type: Inner }
  Blob: { size: 12, align: 4 }
)";
}

// `ferry gen <language>` of gen_test_yaml() (as types.yaml) run twice
// into files a.<extension> and b.<extension>, and once to standard output
// (its default): the same bytes every time, starting with `first_line`
// (which names the file, not its path). Returns what it printed.
inline std::string gen_three_times(const TestDomain& domain, const std::string& language,
                                   const std::string& extension, const std::string& first_line) {
  const std::string yaml = write_file(domain, "types.yaml", gen_test_yaml());
  const std::string ferry = bin_path("ferry");
  const auto to_file = [&](const std::string& name) {
    const std::string file = (domain.runtime_dir() / (name + "." + extension)).string();
    REQUIRE(run_program(domain, {ferry, "gen", language, yaml, "-o", file}).exit_code == 0);
    return read_file(file);
  };
  const std::string first_file = to_file("a");
  CHECK(to_file("b") == first_file);
  const RunResult printed = run_program(domain, {ferry, "gen", language, yaml});
  CHECK(printed.exit_code == 0);
  CHECK(printed.out == first_file);
  CHECK(printed.out.starts_with(first_line));
  return printed.out;
}

// `ferry gen <language>` of `yaml`, written as the file `name`: which file
// (the errors name it) and what the run printed.
struct GenRun {
  std::string file;
  RunResult run;
};
inline GenRun gen_of(const TestDomain& domain, const std::string& language, const std::string& name,
                     const std::string& yaml) {
  GenRun r{write_file(domain, name, yaml), {}};
  r.run = run_program(domain, {bin_path("ferry"), "gen", language, r.file});
  return r;
}

// A config declaring one type, Pose, with one field: `field` of type `type`
// (at line 4, column 26 when `field` has one letter).
inline std::string pose_with_field(const std::string& field, const std::string& type) {
  return "types:\n  Pose:\n    fields:\n      - { name: " + field + ", type: " + type + " }\n";
}

}  // namespace ferry::test

#pragma once
// Reading a configuration file (docs/configuration.md).
//
// Messages are "FILE:LINE:COL: what is wrong; what was expected" with 1-based
// positions, the column counting bytes (e.g. "demo.yaml:14:35: unknown key
// 'capasity' in topic 'robot/pose'; did you mean 'capacity'?"). Positions
// point at the offending value, or at its key when the key itself is wrong
// or the value is missing. A file that cannot be read has no
// position: "FILE: cannot read: No such file or directory; expected a
// readable YAML file". At most kMaxReportedProblems are listed; one more
// line then says how many follow and where the first of them is.

#include <expected>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/config/config.hpp"
#include "ferry/config/diagnostic.hpp"
#include "ferry/config/error.hpp"

namespace ferry::config {

// The text of a configuration file: a regular file of at most
// kMaxConfigFileSize bytes (a FIFO, a device or a directory is refused
// without waiting on it). The error has no position, e.g. "FILE: is a FIFO,
// not a regular file; expected a YAML file". load_file and check_file read
// through it; a daemon that keeps the text uses it directly.
[[nodiscard]] std::expected<std::string, Diagnostic> read_config_text(
    const std::filesystem::path& path);

// Throw ConfigError carrying every problem found; what() is the first one.
[[nodiscard]] Config load_file(const std::filesystem::path& path);
[[nodiscard]] Config load_string(std::string_view text,
                                 std::string_view name_for_errors = "<string>");

// Every problem found (for `ferry config check`), in source order; empty
// when the configuration is valid. Never throws ConfigError.
[[nodiscard]] std::vector<Diagnostic> check_file(const std::filesystem::path& path);
[[nodiscard]] std::vector<Diagnostic> check_string(std::string_view text,
                                                   std::string_view name_for_errors = "<string>");

// The configuration `config` was loaded from (`text`) with its included
// types written in: what ferryd serves its clients, who may not see the
// included files. `text` itself when nothing is included.
[[nodiscard]] std::string self_contained_text(const Config& config, std::string_view text);

}  // namespace ferry::config

#pragma once
// Numbers for humans: rates, byte sizes, large counts, durations.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ferry::cli {

// "50.0", "1.25k", "3.40M"; "-" when unknown.
[[nodiscard]] std::string human_rate(std::optional<double> per_second);
// "64 B", "3.20 KiB", "1.50 MiB" ("64B", "3.20KiB" with an empty separator); "-" when unknown.
[[nodiscard]] std::string human_bytes(std::optional<double> bytes, const char* separator = " ");
// "999", "12.3k", "4.56M", "7.89G".
[[nodiscard]] std::string human_count(std::uint64_t count);
// "850ms", "12.3s", "4m05s", "2h03m".
[[nodiscard]] std::string human_millis(std::uint64_t millis);

// `text` safe for a terminal: C0 and C1 control characters and DEL become
// \xNN (and a backslash \\), so that a name a client chose cannot add rows
// to a table or send escape sequences to the operator's terminal.
[[nodiscard]] std::string printable(std::string_view text);

}  // namespace ferry::cli

#pragma once
// The one error of tools/bag: what() is one sentence naming the file and,
// when the problem is in its contents, the byte offset.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ferry::bag {

class BagError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "FILE: at offset N: what".
[[noreturn]] void fail_at(std::string_view file, std::uint64_t offset, const std::string& what);
// "FILE: what".
[[noreturn]] void fail(std::string_view file, const std::string& what);

}  // namespace ferry::bag

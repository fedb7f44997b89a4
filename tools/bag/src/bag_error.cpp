#include "ferry/bag/bag_error.hpp"

namespace ferry::bag {

void fail_at(std::string_view file, std::uint64_t offset, const std::string& what) {
  throw BagError(std::string(file) + ": at offset " + std::to_string(offset) + ": " + what);
}

void fail(std::string_view file, const std::string& what) {
  throw BagError(std::string(file) + ": " + what);
}

}  // namespace ferry::bag

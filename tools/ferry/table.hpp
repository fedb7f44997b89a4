#pragma once
// A plain text table with aligned columns, for human output.

#include <string>
#include <vector>

namespace ferry::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  // Cells are shown as printable() makes them: names come from clients.
  void add(std::vector<std::string> row);
  [[nodiscard]] std::string render() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace ferry::cli

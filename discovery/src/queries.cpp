#include "ferry/discovery/queries.hpp"

#include <fmt/format.h>

#include <cstdint>

#include "ferry/config/error.hpp"
#include "ferry/config/load.hpp"

namespace ferry::discovery {

std::expected<config::Config, std::string> fetch_config(Client& client, Client::Millis timeout) {
  std::string text;
  std::string source;
  // Each page adds text; the bound guards against a daemon answering in circles.
  for (int pages = 0; pages < 100'000; ++pages) {
    const auto page = ask<ConfigText>(client, GetConfig{static_cast<std::uint32_t>(text.size())},
                                      "configuration", timeout);
    if (!page) return std::unexpected(page.error());
    source = page->source;
    if (page->offset != text.size()) {
      return std::unexpected("ferryd answered the configuration request out of order");
    }
    text += page->text;
    if (page->text.empty() || text.size() >= page->total) break;
  }
  try {
    return config::load_string(text, source.empty() ? "<ferryd's configuration>" : source);
  } catch (const config::ConfigError& e) {
    return std::unexpected(
        fmt::format("cannot read the configuration ferryd serves: {}", e.what()));
  }
}

}  // namespace ferry::discovery

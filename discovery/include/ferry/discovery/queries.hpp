#pragma once
// Questions a tool asks ferryd over a Client (the CLI, the Python module):
// a request and the one reply it expects, and the configuration ferryd
// serves, read page by page.

#include <expected>
#include <string>
#include <string_view>
#include <variant>

#include "ferry/config/config.hpp"
#include "ferry/discovery/client.hpp"
#include "ferry/discovery/messages.hpp"

namespace ferry::discovery {

// Sends `request` and returns its reply when that is a `Reply`. Else why
// not, in a sentence: the request failed, ferryd answered with an Error (its
// message), or with another reply (naming `what` the request was for).
template <class Reply>
[[nodiscard]] std::expected<Reply, std::string> ask(Client& client, const Message& request,
                                                    std::string_view what, Client::Millis timeout) {
  auto reply = client.request(request, timeout);
  if (!reply) return std::unexpected(reply.error());
  if (const auto* error = std::get_if<Error>(&*reply)) return std::unexpected(error->message);
  if (auto* answer = std::get_if<Reply>(&*reply)) return std::move(*answer);
  return std::unexpected("ferryd answered the " + std::string(what) + " request with " +
                         std::string(to_string(type_of(*reply))));
}

// The configuration ferryd serves, loaded; the error is one sentence.
[[nodiscard]] std::expected<config::Config, std::string> fetch_config(Client& client,
                                                                      Client::Millis timeout);

}  // namespace ferry::discovery

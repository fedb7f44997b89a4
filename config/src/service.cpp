#include "ferry/config/service.hpp"

#include <algorithm>
#include <charconv>

#include "ferry/config/config.hpp"
#include "ferry/config/limits.hpp"
#include "ferry/config/names.hpp"

namespace ferry::config {

bool is_valid_service_name(std::string_view name) noexcept {
  return name.size() <= kMaxServiceNameLength && is_valid_topic_name(name) &&
         !name.starts_with(kServicePrefix);
}

std::string service_request_topic(std::string_view service) {
  return std::string(kServicePrefix) + std::string(service) + "/rq";
}

std::string service_response_template(std::string_view service) {
  return std::string(kServicePrefix) + std::string(service) + "/rr";
}

std::string service_response_topic(std::string_view service, std::uint64_t client) {
  return service_response_template(service) + "/" + std::to_string(client);
}

std::optional<ServiceTopic> parse_service_topic(std::string_view topic) {
  if (!topic.starts_with(kServicePrefix)) return std::nullopt;
  std::string_view rest = topic.substr(kServicePrefix.size());
  ServiceTopic out;
  if (rest.ends_with("/rq")) {
    out.service = std::string(rest.substr(0, rest.size() - 3));
    out.request = true;
  } else if (rest.ends_with("/rr")) {
    out.service = std::string(rest.substr(0, rest.size() - 3));
    out.response_template = true;
  } else {
    const auto slash = rest.rfind('/');
    if (slash == std::string_view::npos || slash < 3 || rest.substr(slash - 3, 3) != "/rr")
      return std::nullopt;
    const std::string_view digits = rest.substr(slash + 1);
    const auto [end, ec] =
        std::from_chars(digits.data(), digits.data() + digits.size(), out.client);
    if (ec != std::errc{} || end != digits.data() + digits.size() || out.client == 0)
      return std::nullopt;
    out.service = std::string(rest.substr(0, slash - 3));
  }
  if (out.service.empty()) return std::nullopt;
  return out;
}

std::vector<Topic> service_topics(const Config& config, const Service& service) {
  const auto& types = config.schema.types();
  Topic request;
  request.name = service_request_topic(service.name);
  request.type = service.request;
  request.type_index = service.request_index;
  request.sample_size = types[service.request_index].size;
  request.sample_align = types[service.request_index].align;
  request.pos = service.pos;
  // One ring per client, `capacity` calls each; the client never has more in
  // flight, so a full ring means TooManyPending, never a wait.
  request.settings.capacity = service.capacity;
  request.settings.policy = Policy::DropNew;
  request.settings.max_publishers = service.max_clients;
  request.settings.max_subscribers = 1;  // the server
  request.settings.max_loans = service.capacity;
  request.settings.max_held = kMaxHeld;  // requests the server holds unanswered
  request.settings.history = 0;

  Topic response = request;
  response.name = service_response_template(service.name);
  response.type = service.response;
  response.type_index = service.response_index;
  response.sample_size = types[service.response_index].size;
  response.sample_align = types[service.response_index].align;
  // Twice the calls in flight: a late answer to a call that timed out may
  // sit in the ring beside the answers to the calls that followed it; the
  // oldest goes when it is full (a late answer, dropped anyway).
  response.settings.capacity = std::min<std::uint32_t>(2 * service.capacity, kMaxCapacity);
  response.settings.policy = Policy::DropOldest;
  // Each client's response topic has one publisher and one subscriber; the
  // template counts every client's, so that a pool sized from the topics
  // holds them all.
  response.settings.max_publishers = service.max_clients;
  response.settings.max_subscribers = 1;
  response.settings.max_loans = service.capacity;
  response.settings.max_held = kMaxHeld;  // answers the client holds
  return {std::move(request), std::move(response)};
}

}  // namespace ferry::config

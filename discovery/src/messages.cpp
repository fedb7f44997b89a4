#include "ferry/discovery/messages.hpp"

#include <algorithm>

#include "ferry/discovery/limits.hpp"

namespace ferry::discovery {

std::string_view to_string(MessageType type) noexcept {
  switch (type) {
    case MessageType::hello:
      return "Hello";
    case MessageType::welcome:
      return "Welcome";
    case MessageType::create_publisher:
      return "CreatePublisher";
    case MessageType::create_subscriber:
      return "CreateSubscriber";
    case MessageType::port_created:
      return "PortCreated";
    case MessageType::destroy_port:
      return "DestroyPort";
    case MessageType::port_destroyed:
      return "PortDestroyed";
    case MessageType::matched:
      return "Matched";
    case MessageType::unmatched:
      return "Unmatched";
    case MessageType::error:
      return "Error";
    case MessageType::list_topics:
      return "ListTopics";
    case MessageType::topic_list:
      return "TopicList";
    case MessageType::ping:
      return "Ping";
    case MessageType::pong:
      return "Pong";
    case MessageType::list_nodes:
      return "ListNodes";
    case MessageType::node_list:
      return "NodeList";
    case MessageType::get_config:
      return "GetConfig";
    case MessageType::config_text:
      return "ConfigText";
    case MessageType::queue_released:
      return "QueueReleased";
  }
  return {};  // not a known type; the decoder relies on this being empty
}

std::string_view to_string(UnmatchReason reason) noexcept {
  switch (reason) {
    case UnmatchReason::port_destroyed:
      return "port_destroyed";
    case UnmatchReason::peer_closed:
      return "peer_closed";
    case UnmatchReason::peer_timed_out:
      return "peer_timed_out";
  }
  return {};
}

std::string_view to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::malformed_message:
      return "malformed_message";
    case ErrorCode::unsupported_version:
      return "unsupported_version";
    case ErrorCode::not_registered:
      return "not_registered";
    case ErrorCode::already_registered:
      return "already_registered";
    case ErrorCode::invalid_argument:
      return "invalid_argument";
    case ErrorCode::unknown_topic:
      return "unknown_topic";
    case ErrorCode::type_mismatch:
      return "type_mismatch";
    case ErrorCode::limit_exceeded:
      return "limit_exceeded";
    case ErrorCode::permission_denied:
      return "permission_denied";
    case ErrorCode::unknown_port:
      return "unknown_port";
    case ErrorCode::node_expired:
      return "node_expired";
    case ErrorCode::resource_exhausted:
      return "resource_exhausted";
    case ErrorCode::internal:
      return "internal";
  }
  return {};
}

MessageType type_of(const Message& message) noexcept {
  return std::visit([](const auto& m) { return std::remove_cvref_t<decltype(m)>::kType; }, message);
}

Error make_error(ErrorCode code, std::string_view message) {
  std::string text{message.substr(0, std::min(message.size(), kMaxErrorMessage))};
  if (message.size() > kMaxErrorMessage) {
    // Do not cut a UTF-8 sequence in half: find where the last one starts
    // and drop it when it is incomplete.
    std::size_t start = text.size();
    while (start > 0 && text.size() - start < 4 &&
           (static_cast<unsigned char>(text[start - 1]) & 0xC0) == 0x80) {
      --start;
    }
    if (start > 0) {
      const auto lead = static_cast<unsigned char>(text[start - 1]);
      const std::size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
      if (start - 1 + length > text.size()) text.resize(start - 1);
    }
  }
  std::replace(text.begin(), text.end(), '\0', '?');
  return Error{code, std::move(text)};
}

}  // namespace ferry::discovery

#include "ferry/discovery/messages.hpp"

#include <algorithm>

#include "ferry/discovery/limits.hpp"

namespace ferry::discovery {

std::string_view to_string(MessageType type) noexcept {
  switch (type) {
    case MessageType::Hello:
      return "Hello";
    case MessageType::Welcome:
      return "Welcome";
    case MessageType::CreatePublisher:
      return "CreatePublisher";
    case MessageType::CreateSubscriber:
      return "CreateSubscriber";
    case MessageType::PortCreated:
      return "PortCreated";
    case MessageType::DestroyPort:
      return "DestroyPort";
    case MessageType::PortDestroyed:
      return "PortDestroyed";
    case MessageType::Matched:
      return "Matched";
    case MessageType::Unmatched:
      return "Unmatched";
    case MessageType::Error:
      return "Error";
    case MessageType::ListTopics:
      return "ListTopics";
    case MessageType::TopicList:
      return "TopicList";
    case MessageType::Ping:
      return "Ping";
    case MessageType::Pong:
      return "Pong";
    case MessageType::ListNodes:
      return "ListNodes";
    case MessageType::NodeList:
      return "NodeList";
    case MessageType::GetConfig:
      return "GetConfig";
    case MessageType::ConfigText:
      return "ConfigText";
    case MessageType::QueueReleased:
      return "QueueReleased";
  }
  return {};  // not a known type; the decoder relies on this being empty
}

std::string_view to_string(UnmatchReason reason) noexcept {
  switch (reason) {
    case UnmatchReason::PortDestroyed:
      return "port_destroyed";
    case UnmatchReason::PeerClosed:
      return "peer_closed";
    case UnmatchReason::PeerTimedOut:
      return "peer_timed_out";
  }
  return {};
}

std::string_view to_string(RefusalCode code) noexcept {
  switch (code) {
    case RefusalCode::MalformedMessage:
      return "malformed_message";
    case RefusalCode::UnsupportedVersion:
      return "unsupported_version";
    case RefusalCode::NotRegistered:
      return "not_registered";
    case RefusalCode::AlreadyRegistered:
      return "already_registered";
    case RefusalCode::InvalidArgument:
      return "invalid_argument";
    case RefusalCode::UnknownTopic:
      return "unknown_topic";
    case RefusalCode::TypeMismatch:
      return "type_mismatch";
    case RefusalCode::LimitExceeded:
      return "limit_exceeded";
    case RefusalCode::PermissionDenied:
      return "permission_denied";
    case RefusalCode::UnknownPort:
      return "unknown_port";
    case RefusalCode::NodeExpired:
      return "node_expired";
    case RefusalCode::ResourceExhausted:
      return "resource_exhausted";
    case RefusalCode::Internal:
      return "internal";
  }
  return {};
}

MessageType type_of(const Message& message) noexcept {
  return std::visit([](const auto& m) { return std::remove_cvref_t<decltype(m)>::kType; }, message);
}

Error make_error(RefusalCode code, std::string_view message) {
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

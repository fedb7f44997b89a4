#include "ferry/config/config.hpp"

namespace ferry::config {

const Topic* Config::find_topic(std::string_view name) const noexcept {
  for (const auto& topic : topics) {
    if (topic.name == name) return &topic;
  }
  return nullptr;
}

const Service* Config::find_service(std::string_view name) const noexcept {
  for (const auto& service : services) {
    if (service.name == name) return &service;
  }
  return nullptr;
}

const Type* Config::type_of(const Topic& topic) const noexcept {
  return topic.type_index ? &schema.types()[*topic.type_index] : nullptr;
}

}  // namespace ferry::config

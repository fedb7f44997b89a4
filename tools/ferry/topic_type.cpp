#include "topic_type.hpp"

namespace ferry::cli {

TopicType resolve_type(const config::Config& config, const discovery::TopicInfo& topic) {
  TopicType t;
  if (topic.type_name == config::kBytesType) {
    t.bytes = true;
    return t;
  }
  const config::Type* type = config.schema.find(topic.type_name);
  // The port's size is what the rings carry; a schema type of another size
  // (cannot happen with ferryd's own configuration) is not trusted.
  if (type != nullptr && (topic.sample_size == 0 || type->size == topic.sample_size)) t.type = type;
  return t;
}

}  // namespace ferry::cli

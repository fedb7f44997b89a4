#include "topic_schema.hpp"

#include <chrono>
#include <variant>

#include "ferry/discovery/client.hpp"
#include "ferry/discovery/queries.hpp"
#include "ferry/error.hpp"
#include "numpy_layout.hpp"

namespace ferry::python {

namespace {

constexpr std::chrono::milliseconds kTimeout{3000};

std::shared_ptr<const config::Config> fetch_config(discovery::Client& client) {
  auto config = discovery::fetch_config(client, kTimeout);
  if (!config) throw Error(config.error());
  return std::make_shared<const config::Config>(std::move(*config));
}

}  // namespace

TopicSchema describe_topic(const std::string& domain, const std::string& topic) {
  auto client = discovery::Client::connect(domain, "ferry-python", kTimeout);
  if (!client) throw Error(client.error());
  TopicSchema schema;
  schema.topic = topic;
  schema.config = fetch_config(*client);
  const auto page = discovery::ask<discovery::TopicList>(
      *client, discovery::ListTopics{0, topic, 0}, "topic list", kTimeout);
  if (!page) throw Error(page.error());
  for (const auto& t : page->topics) {
    if (t.name == topic) schema.type_name = t.type_name;
  }
  return schema;
}

std::shared_ptr<const TopicSchema> for_port(TopicSchema described, std::size_t sample_size) {
  auto schema = std::make_shared<TopicSchema>(std::move(described));
  schema->size = sample_size;
  schema->dtype = pybind11::none();
  if (schema->type_name == config::kBytesType) {
    schema->bytes = true;
  } else if (const config::Type* type = schema->config->schema.find(schema->type_name);
             type != nullptr && type->kind == config::TypeKind::Struct &&
             type->size == sample_size) {
    schema->type = type;
    schema->dtype = make_dtype(schema->config->schema, *type);
  }
  return schema;
}

}  // namespace ferry::python

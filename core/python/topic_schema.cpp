#include "topic_schema.hpp"

#include <fmt/format.h>

#include <chrono>
#include <variant>

#include "ferry/config/error.hpp"
#include "ferry/config/load.hpp"
#include "ferry/discovery/client.hpp"
#include "ferry/error.hpp"
#include "numpy_layout.hpp"

namespace ferry::python {

namespace {

constexpr std::chrono::milliseconds kTimeout{3000};

// Sends `request`; the reply must be a `Reply` (an Error reply is thrown).
template <class Reply>
Reply ask(discovery::Client& client, const discovery::Message& request, std::string_view what) {
  auto reply = client.request(request, kTimeout);
  if (!reply) throw Error(reply.error());
  if (const auto* error = std::get_if<discovery::Error>(&*reply)) throw Error(error->message);
  const auto* answer = std::get_if<Reply>(&*reply);
  if (answer == nullptr) {
    throw Error(fmt::format("ferryd answered the {} request with {}", what,
                            discovery::to_string(discovery::type_of(*reply))));
  }
  return *answer;
}

std::shared_ptr<const config::Config> fetch_config(discovery::Client& client) {
  std::string text;
  std::string source;
  // Each page adds text; the bound guards against a daemon answering in circles.
  for (int pages = 0; pages < 100'000; ++pages) {
    const auto page = ask<discovery::ConfigText>(
        client, discovery::GetConfig{static_cast<std::uint32_t>(text.size())}, "configuration");
    source = page.source;
    if (page.offset != text.size()) {
      throw Error("ferryd answered the configuration request out of order");
    }
    text += page.text;
    if (page.text.empty() || text.size() >= page.total) break;
  }
  try {
    return std::make_shared<const config::Config>(
        config::load_string(text, source.empty() ? "<ferryd's configuration>" : source));
  } catch (const config::ConfigError& e) {
    throw Error(fmt::format("cannot read the configuration ferryd serves: {}", e.what()));
  }
}

}  // namespace

TopicSchema describe_topic(const std::string& domain, const std::string& topic) {
  auto client = discovery::Client::connect(domain, "ferry-python", kTimeout);
  if (!client) throw Error(client.error());
  TopicSchema schema;
  schema.topic = topic;
  schema.config = fetch_config(*client);
  const auto page =
      ask<discovery::TopicList>(*client, discovery::ListTopics{0, topic, 0}, "topic list");
  for (const auto& t : page.topics) {
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

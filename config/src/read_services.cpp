// `services:` (docs/services.md).

#include <unordered_map>

#include "ferry/config/limits.hpp"
#include "ferry/config/names.hpp"
#include "readers.hpp"

namespace ferry::config::detail {

namespace {

const std::vector<std::string_view> kServiceKeys{"name", "request", "response", "capacity",
                                                 "max_clients"};
constexpr std::string_view kServiceExample =
    "{ name: planner/plan, request: PlanRequest, response: PlanResponse }";

class ServiceReader {
 public:
  ServiceReader(Reader& reader, const Schema& schema, const std::vector<Topic>& topics)
      : r_(reader), schema_(schema) {
    for (const Topic& t : topics) topics_.emplace(t.name, t.pos);
  }

  std::vector<Service> read(const Entry& services) {
    std::vector<Service> out;
    if (!r_.expect_list(services.value, services.value_pos, "'services'",
                        "[" + std::string(kServiceExample) + "]"))
      return out;
    std::size_t index = 0;
    for (const YAML::Node& item : services.value) {
      ++index;
      const SourcePos pos = item.IsNull() ? services.value_pos : pos_of(item);
      if (!r_.expect_map(item, pos, "service " + std::to_string(index), kServiceExample)) continue;
      if (auto service = read_service(item, pos, index)) out.push_back(std::move(*service));
    }
    return out;
  }

 private:
  std::optional<Service> read_service(const YAML::Node& item, SourcePos pos, std::size_t index) {
    const std::size_t errors = r_.error_count();
    std::string label = "service " + std::to_string(index);
    for (auto it = item.begin(); it != item.end(); ++it) {
      if (it->first.IsScalar() && it->first.Scalar() == "name" && it->second.IsScalar()) {
        label = "service " + quote(it->second.Scalar());
        break;
      }
    }
    Service service;
    service.pos = pos;
    bool has_name = false, has_request = false, has_response = false;
    for (const Entry& e : r_.entries(item, "in " + label, kServiceKeys)) {
      if (e.key == "name") {
        has_name = true;
        if (auto text = r_.string(e)) {
          service.name = *text;
          check_name(service.name, e.value_pos);
        }
      } else if (e.key == "request" || e.key == "response") {
        (e.key == "request" ? has_request : has_response) = true;
        if (auto text = r_.string(e)) {
          auto& name = e.key == "request" ? service.request : service.response;
          auto& type_index = e.key == "request" ? service.request_index : service.response_index;
          name = *text;
          if (auto found = schema_.index_of(name)) {
            type_index = *found;
          } else {
            r_.error(e.value_pos, "undeclared " + e.key + " type " + quote(name) + " for " + label +
                                      "; expected a type declared under 'types'");
          }
        }
      } else if (e.key == "capacity") {
        if (auto value = r_.integer(e, 1, kMaxServiceCapacity)) {
          if ((*value & (*value - 1)) != 0) {
            r_.error(e.value_pos, "capacity " + std::to_string(*value) + " of " + label +
                                      " is not a power of two; expected a power of two from 1 "
                                      "to " +
                                      std::to_string(kMaxServiceCapacity));
          } else {
            service.capacity = static_cast<std::uint32_t>(*value);
          }
        }
      } else if (e.key == "max_clients") {
        if (auto value = r_.integer(e, 1, kMaxServiceClients))
          service.max_clients = static_cast<std::uint32_t>(*value);
      }
    }
    if (!has_name) r_.error(pos, label + " has no 'name'; expected e.g. name: planner/plan");
    if (!has_request)
      r_.error(pos, label + " has no 'request'; expected a type declared under 'types'");
    if (!has_response)
      r_.error(pos, label + " has no 'response'; expected a type declared under 'types'");
    if (r_.error_count() != errors) return std::nullopt;
    return service;
  }

  void check_name(const std::string& name, SourcePos pos) {
    if (!is_valid_service_name(name)) {
      r_.error(pos, "invalid service name " + quote(name) + "; expected 1 to " +
                        std::to_string(kMaxServiceNameLength) +
                        " characters of A-Z a-z 0-9 _ / . -, without a leading, trailing or "
                        "double '/' and not starting with '" +
                        std::string(kServicePrefix) + "'");
      return;
    }
    if (auto topic = topics_.find(name); topic != topics_.end()) {
      r_.error(pos, "service " + quote(name) + " has the name of the topic declared at " +
                        to_string(topic->second) +
                        "; expected a name no topic has (a service and a topic may not share "
                        "one)");
      return;
    }
    const auto [it, inserted] = seen_.emplace(name, pos);
    if (!inserted)
      r_.error(pos,
               "duplicate service " + quote(name) + "; first declared at " + to_string(it->second));
  }

  Reader& r_;
  const Schema& schema_;
  std::unordered_map<std::string, SourcePos> topics_;
  std::unordered_map<std::string, SourcePos> seen_;
};

}  // namespace

std::vector<Service> read_services(Reader& reader, const Entry& services, const Schema& schema,
                                   const std::vector<Topic>& topics) {
  return ServiceReader(reader, schema, topics).read(services);
}

}  // namespace ferry::config::detail

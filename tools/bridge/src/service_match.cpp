// Before an exported service answers a client it has not answered yet, it
// makes sure its reply writer matched that client's reply reader, as
// rmw_cyclonedds' rmw_send_response does (check_for_response_reader): the
// reply topic is VOLATILE, so a reply written before the match is lost.
// The client is recognised by the `clientid=` of its endpoints' user data.
#include <spdlog/spdlog.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "service_link.hpp"

namespace ferry::bridge {

namespace {

struct EndpointDelete {
  void operator()(dds_builtintopic_endpoint_t* e) const noexcept {
    dds_builtintopic_free_endpoint(e);
  }
};
using Endpoint = std::unique_ptr<dds_builtintopic_endpoint_t, EndpointDelete>;

// The value of `key` in user data "k1=v1;k2=v2;" (empty: none).
std::string user_data_value(const dds_builtintopic_endpoint_t* ep, std::string_view key) {
  void* value = nullptr;
  std::size_t size = 0;
  if (ep == nullptr || ep->qos == nullptr || !dds_qget_userdata(ep->qos, &value, &size) ||
      value == nullptr)
    return {};
  const std::string text(static_cast<const char*>(value), size);
  dds_free(value);
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find(';', at), text.size());
    const std::string_view item = std::string_view(text).substr(at, end - at);
    if (item.size() > key.size() && item.starts_with(key) && item[key.size()] == '=')
      return std::string(item.substr(key.size() + 1));
    at = end + 1;
  }
  return {};
}

bool writer_matched_client(dds_entity_t writer, const std::string& clientid) {
  std::vector<dds_instance_handle_t> readers(16);
  dds_return_t n = 0;
  for (;;) {
    n = dds_get_matched_subscriptions(writer, readers.data(), readers.size());
    if (n < 0) return false;
    if (static_cast<std::size_t>(n) <= readers.size()) break;
    readers.resize(static_cast<std::size_t>(n));
  }
  for (dds_return_t i = 0; i < n; ++i) {
    const Endpoint ep(
        dds_get_matched_subscription_data(writer, readers[static_cast<std::size_t>(i)]));
    if (user_data_value(ep.get(), "clientid") == clientid) return true;
  }
  return false;
}

}  // namespace

ReplyMatch ReplyReaderCheck::check(dds_entity_t reader, dds_entity_t writer,
                                   dds_instance_handle_t request_writer,
                                   std::chrono::milliseconds patience) {
  if (confirmed_.contains(request_writer)) return ReplyMatch::Yes;
  const Endpoint client(dds_get_matched_publication_data(reader, request_writer));
  if (client == nullptr) return ReplyMatch::Gone;  // its request writer left
  const std::string clientid = user_data_value(client.get(), "clientid");
  if (!clientid.empty()) {
    const auto until = std::chrono::steady_clock::now() + patience;
    while (!writer_matched_client(writer, clientid)) {
      if (std::chrono::steady_clock::now() >= until) return ReplyMatch::NotYet;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // discovery in progress: rare
    }
  }  // else a client without an id (older rmw_cyclonedds): assume all is well, as rmw does
  confirmed_.insert(request_writer);
  return ReplyMatch::Yes;
}

}  // namespace ferry::bridge

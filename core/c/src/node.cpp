// ferry_node_create / ferry_node_destroy.
#include "error.hpp"
#include "handles.hpp"

using ferry::c::fail_null;
using ferry::c::guarded;

extern "C" {

ferry_error_t ferry_node_create(const char* name, const char* domain, ferry_node_t** node) {
  constexpr const char* kCall = "ferry_node_create";
  if (node == nullptr) return fail_null(kCall, "the node out-pointer");
  *node = nullptr;
  if (name == nullptr) return fail_null(kCall, "name");
  return guarded(kCall, [&] {
    ferry::NodeOptions options;
    if (domain != nullptr) options.domain = domain;
    *node = new ferry_node_t{ferry::Node(name, options)};
    return FERRY_OK;
  });
}

void ferry_node_destroy(ferry_node_t* node) { delete node; }

}  // extern "C"

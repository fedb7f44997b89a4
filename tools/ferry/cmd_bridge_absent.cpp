// ferry bridge in a build configured with FERRY_BUILD_BRIDGE=OFF (no Cyclone
// DDS): the verb and its flags parse as usual, and running it says that the
// bridge was left out.
#include "commands.hpp"

namespace ferry::cli {

int run_bridge(const BridgeCliOptions&, const Context&) {
  throw Failure(kExitRuntime,
                "this ferry was built without its DDS bridge (FERRY_BUILD_BRIDGE=OFF); "
                "build it with Eclipse Cyclone DDS installed (cmake -DFERRY_BUILD_BRIDGE=ON)");
}

}  // namespace ferry::cli

// ferry foxglove in a build configured with FERRY_BUILD_FOXGLOVE=OFF (the
// demo's, which skips Boost.Beast's minute of compile): the verb and its
// flags parse as usual, and running it says that the server was left out.
#include "commands.hpp"

namespace ferry::cli {

int run_foxglove(const FoxgloveCliOptions&, const Context&) {
  throw Failure(kExitRuntime,
                "this ferry was built without its Foxglove server (FERRY_BUILD_FOXGLOVE=OFF); "
                "scripts/build.sh builds it (cmake -DFERRY_BUILD_FOXGLOVE=ON)");
}

}  // namespace ferry::cli

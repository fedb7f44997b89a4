#pragma once
// Names of the per-port objects ferryd makes (doorbells, rings): the port
// ids in them are easy to guess, so each also carries 64 random bits. Another
// local user who can write /dev/shm cannot make a name ferryd will use
// before ferryd does, and a name that exists all the same (an object ferryd
// cannot remove) costs one more try with other bits, never the port.

#include <expected>
#include <functional>
#include <string>

namespace ferry::discovery {

// Tries to make an object named `base` + "." + 16 random hex digits, with
// other random digits after a failure, up to 4 times. Returns the name
// made, or the last failure.
[[nodiscard]] std::expected<std::string, std::string> make_unguessable(
    const std::string& base,
    const std::function<std::expected<void, std::string>(const std::string&)>& make);

}  // namespace ferry::discovery

#pragma once
#include <cstdint>
#include <ferry/ferry.hpp>

// Pose, Command and Image: `ferry gen cpp fusion.yaml` at build time.
#include "fusion_types.hpp"

#pragma once
// Private to the pool: how its per-sample operations are compiled.

// Everything the function calls is inlined into it (recursively), so one
// call does the whole operation. For allocate, release, transfer, accept and
// resolve: out of line, their helpers' std::expected results go through the
// stack and are read back wider than they were written, a store-forwarding
// stall each; inlined they stay in registers. With this, and ferry_transport
// built without semantic interposition (transport/CMakeLists.txt), one
// thread's allocate-transfer-accept-resolve-release cycle went from about
// 210 ns to 110-160 ns.
#define FERRY_FLATTEN [[gnu::flatten]]

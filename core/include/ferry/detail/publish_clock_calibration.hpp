#pragma once
// The time every publish() stamps on its sample (SampleInfo::publish_time_ns,
// CLOCK_REALTIME), read in about half of what clock_gettime costs
// (publish_time_ns(), ferry/detail/publish_clock.hpp).
//
// clock_gettime(CLOCK_REALTIME) is answered by the vDSO, but it orders its
// TSC read (lfence; rdtsc) and re-checks the kernel's sequence: ~52 ns a call
// on the development VM against ~27 ns for a plain rdtsc, on a path whose
// whole one-way cost is ~340 ns at 64 B (issue 15's budget is 1.2x the bare
// ring). So the publisher converts the TSC itself: realtime = anchor_ns +
// (tsc - anchor_tsc) x ns_per_tick, with the anchor and the rate measured
// against clock_gettime by the node's runtime thread (publish_clock_tick(),
// every beat; re-anchored every second, the rate taken over the last ~16 s).
//
// Used only where the kernel itself keeps time with the TSC (its current
// clocksource is "tsc": it found the TSC one clock for every core that
// never stops, and watches it); elsewhere (kvm-clock, hpet, a TSC the
// kernel marked unstable), and until the first calibration (~20 ms after
// the first node), publish_time_ns() is clock_gettime itself. A child
// forked while a thread calibrated starts calibrating afresh. A step of the system clock
// (settimeofday) shows in publish times at the next anchor, within a second.

// tsc_to_realtime_ns() is signed: a TSC read a little before the anchor (on
// another core, or just before the runtime thread published a new anchor)
// is a time a little before anchor_ns, not ~190 years after it. Two's
// complement wrap-around adds the negative offset (C++20 defines both the
// conversion and the arithmetic right shift). publish_time_ns() reads the
// TSC with the builtin, not <x86intrin.h>'s __rdtsc(): that header is
// ~55,000 lines (every AVX-512 intrinsic) in each file that includes
// ferry.hpp.
//
// This header: the calibration's side, for the runtime thread and the tests.

namespace ferry::detail {

// Called by every node's runtime thread on each beat (not the hot path):
// measures the TSC against clock_gettime and rewrites the anchor when due.
// Cheap when nothing is due; safe from several threads at once.
void publish_clock_tick() noexcept;

// Whether the kernel keeps time with the TSC: the clocksource file
// (normally /sys/devices/system/clocksource/clocksource0/current_clocksource)
// names "tsc". Only then is the TSC one clock for every core that never
// stops, in the kernel's own judgement.
[[nodiscard]] bool clocksource_is_tsc(const char* path) noexcept;

// Tests: holds (true) or lets go of (false) the flag a runtime thread
// holds while it calibrates, as if one were in the middle of a tick.
void publish_clock_hold_for_test(bool held) noexcept;

}  // namespace ferry::detail

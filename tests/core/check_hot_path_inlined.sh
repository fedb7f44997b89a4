#!/usr/bin/env bash
# Fails when a function of the hot path (marked FERRY_HOT: forced inline)
# appears as a symbol of the probe object, defined or called: a compiler
# upgrade or an edit that brings the call boundary back (about 100 ns a poll,
# measured in issue 7) is caught here, not months later in `ferry bench`.
# Usage: check_hot_path_inlined.sh PROBE_OBJECT
set -euo pipefail
obj="$1"
symbols=$(nm -C "$obj")

# The probe must really hold the two entry points, or the check proves nothing.
for entry in 'probe_publish(' 'probe_take('; do
  grep -qF "$entry" <<<"$symbols" || { echo "FAIL: $obj defines no $entry" >&2; exit 1; }
done

hot='Publisher<probe::Pose>::publish|Subscriber<probe::Pose>::(take|try_take|make_sample)'
hot+='|PublisherPort::publish\(|SubscriberPort::take\(|PublishLane::|TakeLane::|LaneGuard::'
hot+='|node_state_says_dead|HeldSamples::(acquire|release)\('
hot+='|(RingProducer|ProducerFastPath)::(try_push|prefetch_next_slot|publish|write_slot)\('
hot+='|(RingConsumer|ConsumerFastPath)::(try_pop_ready|ready)\('
if found=$(grep -E "$hot" <<<"$symbols"); then
  echo "FAIL: hot-path functions are not inlined into publish()/take():" >&2
  echo "$found" >&2
  exit 1
fi
echo "hot path inlined: no FERRY_HOT function among $(wc -l <<<"$symbols") symbols of $(basename "$obj")"

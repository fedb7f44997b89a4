#include "throughput/throughput_transport.hpp"

namespace ferry::bench {

std::unique_ptr<ThroughputTransport> make_throughput_transport(std::string_view name) {
  if (name == kFerry) return make_ferry_throughput();
  if (name == kFerryCopy) return make_ferry_copy_throughput();
  if (name == kFerryLoan) return make_ferry_loan_throughput();
  if (name == kRawRing) return make_raw_ring_throughput();
  if (name == kCacheline) return make_cacheline_throughput();
  if (name == kUnixSocket) return make_unix_socket_throughput();
  if (name == kPipe) return make_pipe_throughput();
#ifdef FERRY_BENCH_HAVE_ICEORYX
  if (name == kIceoryx) return make_iceoryx_throughput();
#endif
#ifdef FERRY_BENCH_HAVE_FASTDDS
  if (name == kFastDds) return make_fastdds_throughput();
#endif
#ifdef FERRY_BENCH_HAVE_CYCLONEDDS
  if (name == kCycloneDds) return make_cyclonedds_throughput();
#endif
  return nullptr;
}

}  // namespace ferry::bench

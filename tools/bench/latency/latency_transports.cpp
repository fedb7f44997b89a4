#include "latency/latency_transport.hpp"

namespace ferry::bench {

std::unique_ptr<LatencyTransport> make_latency_transport(std::string_view name) {
  if (name == kFerry) return make_ferry_latency();
  if (name == kFerryCopy) return make_ferry_copy_latency();
  if (name == kFerryLoan) return make_ferry_loan_latency();
  if (name == kFerryWaitSet) return make_ferry_copy_latency(kFerryWaitSet, FerryWake::WaitSet);
  if (name == kFerryFd) return make_ferry_copy_latency(kFerryFd, FerryWake::Fd);
  if (name == kFerryC) return make_ferry_c_latency();
  if (name == kFerryImage) return make_ferry_image_latency();
  if (name == kRawRing) return make_raw_ring_latency();
  if (name == kRawRingOwned) return make_raw_ring_owned_latency();
  if (name == kUnixSocket) return make_unix_socket_latency();
  if (name == kPipe) return make_pipe_latency();
  if (name == kCacheline) return make_cacheline_latency();
#ifdef FERRY_BENCH_HAVE_ICEORYX
  if (name == kIceoryx) return make_iceoryx_latency();
#endif
#ifdef FERRY_BENCH_HAVE_FASTDDS
  if (name == kFastDds) return make_fastdds_latency();
#endif
#ifdef FERRY_BENCH_HAVE_CYCLONEDDS
  if (name == kCycloneDds) return make_cyclonedds_latency();
#endif
  return nullptr;
}

}  // namespace ferry::bench

// Samples: their bytes, size and info, and their release.
#include "error.hpp"
#include "handles.hpp"

extern "C" {

const void* ferry_sample_data(const ferry_sample_t* sample) {
  if (sample == nullptr) {
    (void)ferry::c::fail_null("ferry_sample_data", "sample");
    return nullptr;
  }
  return sample->data;
}

size_t ferry_sample_size(const ferry_sample_t* sample) {
  if (sample == nullptr) {
    (void)ferry::c::fail_null("ferry_sample_size", "sample");
    return 0;
  }
  return sample->size;
}

ferry_sample_info_t ferry_sample_info(const ferry_sample_t* sample) {
  if (sample == nullptr) {
    (void)ferry::c::fail_null("ferry_sample_info", "sample");
    return ferry_sample_info_t{};
  }
  if (!sample->sample) return ferry_sample_info_t{};
  const ferry::SampleInfo& i = sample->sample->info();
  return ferry_sample_info_t{i.sequence, i.publisher_id, i.publish_time_ns};
}

ferry_error_t ferry_sample_release(ferry_sample_t* sample) {
  if (sample == nullptr) return FERRY_OK;
  if (!ferry::c::SampleSlots::release(*sample)) [[unlikely]] {
    return ferry::c::fail(FERRY_ERROR_INVALID_ARGUMENT,
                          "ferry_sample_release: the sample was released already");
  }
  return FERRY_OK;
}

}  // extern "C"

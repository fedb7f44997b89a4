// Batches of loans: ferry_loan_many, ferry_loan_batch_*, ferry_publish_loan_many.
// The handle is the publisher's one batch slot (handles.hpp): a publisher
// has at most one batch out, so loaning one allocates nothing.
#include "error.hpp"
#include "handles.hpp"
#include "publish_result.hpp"

using ferry::c::fail;
using ferry::c::fail_null;

namespace {

// The batch as this publisher's batch that is out, else an error sentence.
ferry_error_t check_batch(const char* call, ferry_publisher_t* pub,
                          ferry_loan_batch_t* batch) noexcept {
  if (pub == nullptr) return fail_null(call, "publisher");
  if (batch == nullptr) return fail_null(call, "batch");
  if (batch->owner != pub) {
    return fail(FERRY_ERROR_INVALID_ARGUMENT, "%s: the batch belongs to another publisher", call);
  }
  if (!batch->batch) {
    return fail(FERRY_ERROR_INVALID_ARGUMENT,
                "%s: the batch was published or returned already on topic '%s'", call,
                pub->port.topic().c_str());
  }
  return FERRY_OK;
}

}  // namespace

extern "C" {

ferry_error_t ferry_loan_many(ferry_publisher_t* publisher, size_t count,
                              ferry_loan_batch_t** batch, void** data) {
  constexpr const char* kCall = "ferry_loan_many";
  if (batch != nullptr) *batch = nullptr;
  if (data != nullptr) *data = nullptr;
  if (publisher == nullptr) [[unlikely]]
    return fail_null(kCall, "publisher");
  if (batch == nullptr || data == nullptr) [[unlikely]]
    return fail_null(kCall, batch == nullptr ? "the batch out-pointer" : "the data out-pointer");
  if (publisher->port.sample_size() == 0) [[unlikely]] {
    return fail(FERRY_ERROR_INVALID_ARGUMENT,
                "%s: topic '%s' is a bytes topic; publish its samples one by one", kCall,
                publisher->port.topic().c_str());
  }
  if (publisher->batch.batch) [[unlikely]] {
    return fail(FERRY_ERROR_TOO_MANY_LOANS,
                "%s: a batch of topic '%s' is out already; publish or return it first", kCall,
                publisher->port.topic().c_str());
  }
  if (count > publisher->port.loan_many_capacity()) [[unlikely]] {
    return fail(FERRY_ERROR_INVALID_ARGUMENT,
                "%s: %zu samples asked, but a batch of topic '%s' holds at most %zu", kCall, count,
                publisher->port.topic().c_str(), publisher->port.loan_many_capacity());
  }
  auto loaned = publisher->port.loan_many(count);
  if (!loaned) [[unlikely]]
    return ferry::c::fail_code(loaned.error(), kCall, publisher->port.topic().c_str());
  *data = loaned->data();
  publisher->batch.batch.emplace(std::move(*loaned));
  *batch = &publisher->batch;
  return FERRY_OK;
}

void* ferry_loan_batch_sample(const ferry_loan_batch_t* batch, size_t index) {
  if (batch == nullptr || !batch->batch || index >= batch->batch->size()) return nullptr;
  return batch->batch->sample(index);
}

size_t ferry_loan_batch_size(const ferry_loan_batch_t* batch) {
  return batch == nullptr || !batch->batch ? 0 : batch->batch->size();
}

ferry_error_t ferry_loan_batch_shrink(ferry_loan_batch_t* batch, size_t count) {
  constexpr const char* kCall = "ferry_loan_batch_shrink";
  if (batch == nullptr) return fail_null(kCall, "batch");
  if (!batch->batch) return fail(FERRY_ERROR_INVALID_ARGUMENT, "%s: the batch is not out", kCall);
  batch->batch->shrink(count);
  return FERRY_OK;
}

ferry_error_t ferry_publish_loan_many(ferry_publisher_t* publisher, ferry_loan_batch_t* batch,
                                      ferry_publish_result_t* result) {
  constexpr const char* kCall = "ferry_publish_loan_many";
  if (const ferry_error_t e = check_batch(kCall, publisher, batch); e != FERRY_OK) [[unlikely]] {
    if (result != nullptr) *result = ferry_publish_result_t{};
    return e;
  }
  ferry::RawLoanBatch taken = std::move(*batch->batch);
  batch->batch.reset();
  return ferry::c::report(publisher->port.publish_many(std::move(taken)), result, kCall,
                          publisher->port.topic());
}

ferry_error_t ferry_loan_batch_return(ferry_publisher_t* publisher, ferry_loan_batch_t* batch) {
  if (const ferry_error_t e = check_batch("ferry_loan_batch_return", publisher, batch);
      e != FERRY_OK)
    return e;
  batch->batch.reset();  // gives the batch back
  return FERRY_OK;
}

}  // extern "C"

// Loans: ferry_loan, ferry_publish_loan, ferry_loan_return.
#include "error.hpp"
#include "handles.hpp"
#include "publish_result.hpp"

using ferry::c::fail;
using ferry::c::fail_null;

namespace {

// A free slot; a new block when every slot is out (more loans at once than
// ever before on this publisher: not a steady state).
ferry_loan_t* free_slot(ferry_publisher_t* pub) noexcept {
  if (pub->free_loans == nullptr) [[unlikely]] {
    try {
      pub->add_loan_block();
    } catch (...) {
      return nullptr;
    }
  }
  ferry_loan_t* slot = pub->free_loans;
  pub->free_loans = slot->next_free;
  return slot;
}

void free_loan(ferry_publisher_t* pub, ferry_loan_t* slot) noexcept {
  slot->next_free = pub->free_loans;
  pub->free_loans = slot;
}

// The loan as this publisher's live loan, else an error sentence.
ferry_error_t check_loan(const char* call, ferry_publisher_t* pub, ferry_loan_t* loan) noexcept {
  if (pub == nullptr) return fail_null(call, "publisher");
  if (loan == nullptr) return fail_null(call, "loan");
  if (loan->owner != pub) {
    return fail(FERRY_ERROR_INVALID_ARGUMENT, "%s: the loan belongs to another publisher", call);
  }
  if (!loan->loan) {
    return fail(FERRY_ERROR_INVALID_ARGUMENT,
                "%s: the loan was published or returned already on topic '%s'", call,
                pub->port.topic().c_str());
  }
  return FERRY_OK;
}

}  // namespace

void ferry_publisher_s::add_loan_block() {
  auto block = std::make_unique<ferry_loan_t[]>(kLoanBlock);
  for (std::size_t i = 0; i < kLoanBlock; ++i) {
    block[i].owner = this;
    block[i].next_free = i + 1 < kLoanBlock ? &block[i + 1] : free_loans;
  }
  loan_blocks.push_back(std::move(block));  // before free_loans changes: it may throw
  free_loans = loan_blocks.back().get();
}

extern "C" {

ferry_error_t ferry_loan(ferry_publisher_t* publisher, ferry_loan_t** loan, void** data) {
  constexpr const char* kCall = "ferry_loan";
  if (loan != nullptr) *loan = nullptr;
  if (data != nullptr) *data = nullptr;
  if (publisher == nullptr) [[unlikely]]
    return fail_null(kCall, "publisher");
  if (loan == nullptr || data == nullptr) [[unlikely]]
    return fail_null(kCall, loan == nullptr ? "the loan out-pointer" : "the data out-pointer");
  const std::size_t size = publisher->port.sample_size();
  if (size == 0) [[unlikely]] {
    return fail(FERRY_ERROR_INVALID_ARGUMENT,
                "%s: topic '%s' is a bytes topic; publish its samples with ferry_publish", kCall,
                publisher->port.topic().c_str());
  }
  auto chunk = publisher->port.loan(size);
  if (!chunk) [[unlikely]]
    return ferry::c::fail_code(chunk.error(), kCall, publisher->port.topic().c_str());
  ferry_loan_t* slot = free_slot(publisher);
  if (slot == nullptr) [[unlikely]]
    return fail(FERRY_ERROR_NO_MEMORY, "%s: out of memory for a loan handle", kCall);
  *data = chunk->data();
  slot->loan.emplace(std::move(*chunk));
  *loan = slot;
  return FERRY_OK;
}

ferry_error_t ferry_publish_loan(ferry_publisher_t* publisher, ferry_loan_t* loan,
                                 ferry_publish_result_t* result) {
  constexpr const char* kCall = "ferry_publish_loan";
  if (const ferry_error_t e = check_loan(kCall, publisher, loan); e != FERRY_OK) [[unlikely]] {
    if (result != nullptr) *result = ferry_publish_result_t{};
    return e;
  }
  ferry::RawLoan taken = std::move(*loan->loan);
  loan->loan.reset();
  free_loan(publisher, loan);
  return ferry::c::report(publisher->port.publish(std::move(taken), publisher->port.sample_size()),
                          result, kCall, publisher->port.topic());
}

ferry_error_t ferry_loan_return(ferry_publisher_t* publisher, ferry_loan_t* loan) {
  if (const ferry_error_t e = check_loan("ferry_loan_return", publisher, loan); e != FERRY_OK)
    return e;
  loan->loan.reset();  // the chunk goes back to the pool
  free_loan(publisher, loan);
  return FERRY_OK;
}

}  // extern "C"

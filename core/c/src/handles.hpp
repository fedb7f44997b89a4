#pragma once
// What the C API's opaque handles are: each wraps the C++ object it binds
// (ferry::Node, RawPublisher, RawSubscriber, WaitSet). Samples and loans
// are slots preallocated by their subscriber and publisher, so that taking
// and loaning allocate nothing.

#include <memory>
#include <optional>
#include <vector>

#include "ferry/ferry.h"
#include "ferry/node.hpp"
#include "ferry/raw.hpp"
#include "ferry/wait_set.hpp"
#include "sample_slots.hpp"

struct ferry_node_s {
  ferry::Node node;
};

// A loan slot: the publisher's, on its thread only (as RawLoan is).
struct ferry_loan_s {
  std::optional<ferry::RawLoan> loan;  // empty: free (published or returned)
  ferry_publisher_t* owner = nullptr;
  ferry_loan_t* next_free = nullptr;
};

// The publisher's one batch of loans (ferry_loan_many): on its thread only,
// as RawLoanBatch is.
struct ferry_loan_batch_s {
  std::optional<ferry::RawLoanBatch> batch;  // empty: none out
  ferry_publisher_t* owner = nullptr;
};

struct ferry_publisher_s {
  explicit ferry_publisher_s(ferry::RawPublisher&& p) : port(std::move(p)) { batch.owner = this; }
  ferry::RawPublisher port;
  // Loan slots in blocks of kLoanBlock that never move (a handle is a
  // pointer into one). The first block comes with the publisher; another is
  // added only when more loans are out at once than ever before, so a steady
  // loop of loan/publish_loan allocates nothing. Declared after `port`:
  // destroyed first, returning unpublished loans while the port lives.
  static constexpr std::size_t kLoanBlock = 64;
  std::vector<std::unique_ptr<ferry_loan_t[]>> loan_blocks;
  ferry_loan_t* free_loans = nullptr;
  // Adds kLoanBlock free slots (loan.cpp); throws std::bad_alloc.
  void add_loan_block();
  // Its batch of loans (loan_many.cpp); after `port` too, for the same reason.
  ferry_loan_batch_t batch;
};

struct ferry_subscriber_s {
  explicit ferry_subscriber_s(ferry::RawSubscriber&& s);
  ~ferry_subscriber_s();
  ferry_subscriber_s(const ferry_subscriber_s&) = delete;
  ferry_subscriber_s& operator=(const ferry_subscriber_s&) = delete;
  ferry::RawSubscriber port;
  ferry::c::SampleSlots* slots;  // outlives us while a sample is held (sample_slots.hpp)
};

struct ferry_waitset_s {
  ferry::WaitSet set;
};

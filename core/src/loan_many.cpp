// loan_many (docs/batches.md): a batch of loans, written in place and
// published in order as one publish_many.
//
// Samples that fit a ring slot are loaned back to back in the publisher's
// batch buffer and copied into the slots at publish, one tail store and at
// most one wake-up per queue, as publish_many sends a span: for a few cache
// lines a copy costs less than a pool reference costs its reader (accept,
// payload, release: three line transfers), which is why single small loans
// are scratch buffers too (publisher_port.cpp). Larger samples are one pool
// chunk each, published one by one as single loans are: never copied.
#include <new>

#include "ferry/detail/ports.hpp"
#include "node_runtime.hpp"
#include "publish_policy.hpp"
#include "publisher_state.hpp"

namespace ferry::detail {

std::expected<LoanedBatch, ErrorCode> PublisherPort::loan_many(std::size_t count,
                                                               std::uint32_t size) noexcept {
  PublisherState& s = *state_;
  (void)s.queue_ends();  // one acquire load: picks up a death sentence
  if (s.dead_seen) [[unlikely]]
    return std::unexpected(s.dead_error());
  if (count == 0) return LoanedBatch{};  // nothing to loan, nothing to give back
  if (count > batch_capacity_) return std::unexpected(ErrorCode::InvalidArgument);
  if (batch_out_) return std::unexpected(ErrorCode::TooManyLoans);
  if (batch_chunks_ == nullptr) {
    // Fits a slot: the batch buffer, one loan however many samples it holds.
    if (loans_out_ >= max_loans_) return std::unexpected(ErrorCode::TooManyLoans);
    ++loans_out_;
    batch_out_ = true;
    return LoanedBatch{batch_buffer_.get(), nullptr, count, size, LoanedBatch::Kind::Inline};
  }
  // One chunk per sample, each a loan: all of them or none.
  if (count > max_loans_ - loans_out_) return std::unexpected(ErrorCode::TooManyLoans);
  for (std::size_t i = 0; i < count; ++i) {
    auto chunk = loan_general(size);
    if (!chunk) {
      while (i > 0) return_loan(batch_chunks_[--i]);
      return std::unexpected(chunk.error());
    }
    batch_chunks_[i] = *chunk;
  }
  batch_out_ = true;
  return LoanedBatch{nullptr, batch_chunks_.get(), count, size, LoanedBatch::Kind::Pooled};
}

PublishResult PublisherPort::publish_loan_many(LoanedBatch& batch) noexcept {
  const LoanedBatch taken = std::exchange(batch, LoanedBatch{});
  PublishResult result;
  switch (taken.kind) {
    case LoanedBatch::Kind::Empty:
      return result;
    case LoanedBatch::Kind::Inline:
      result = publish_many(taken.data, taken.count, taken.size);
      --loans_out_;
      break;
    case LoanedBatch::Kind::Pooled:
      // Each chunk goes as a single loan does (its own sequence and clock
      // read), in order; each publish consumes its chunk and its loan.
      for (std::size_t i = 0; i < taken.count; ++i)
        add_result(result, publish_loan(taken.chunks[i], taken.size));
      break;
  }
  batch_out_ = false;
  return result;
}

void PublisherPort::shrink_loan_many(LoanedBatch& batch, std::size_t count) noexcept {
  if (count >= batch.count) return;
  if (batch.kind == LoanedBatch::Kind::Pooled) {
    for (std::size_t i = count; i < batch.count; ++i) return_loan(batch.chunks[i]);
  }
  batch.count = count;
}

void PublisherPort::return_loan_many(LoanedBatch& batch) noexcept {
  const LoanedBatch taken = std::exchange(batch, LoanedBatch{});
  switch (taken.kind) {
    case LoanedBatch::Kind::Empty:
      return;
    case LoanedBatch::Kind::Inline:
      --loans_out_;
      break;
    case LoanedBatch::Kind::Pooled:
      for (std::size_t i = 0; i < taken.count; ++i) return_loan(taken.chunks[i]);
      break;
  }
  batch_out_ = false;
}

}  // namespace ferry::detail

#pragma once
// A bounded FIFO from one producer thread to one consumer thread, which
// works on each entry where it lies: ferry record's taking thread hands the
// samples it took to its writing thread through it (recorder.hpp).
//
// Both sides work in batches, one lock per batch: the producer fills slots
// past the queued entries and then appends them; the consumer works on the
// queued entries and then pops them. The producer never waits for room
// (room() says how much there is); the consumer sleeps while the queue is
// empty. A mutex and two condition variables: every sleep ends when it
// should (no lost wake-up), and TSan sees it all.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <vector>

namespace ferry::cli {

template <class T>
class HandoffQueue {
 public:
  // `capacity` entries, default-constructed now; entries are filled and
  // read where they lie, never moved.
  explicit HandoffQueue(std::size_t capacity) : slots_(capacity == 0 ? 1 : capacity) {}
  HandoffQueue(const HandoffQueue&) = delete;
  HandoffQueue& operator=(const HandoffQueue&) = delete;

  [[nodiscard]] std::size_t capacity() const noexcept { return slots_.size(); }

  // Producer: how many entries can be appended now (0 once closed).
  [[nodiscard]] std::size_t room() const {
    std::lock_guard lock(mutex_);
    return closed_ ? 0 : slots_.size() - (tail_ - head_);
  }
  // Producer: the i-th slot past the queued entries, i < room(), to be
  // filled in place (it holds what its last entry left there).
  [[nodiscard]] T& back(std::size_t i) noexcept {
    // tail_ is written only by this thread; the slot is outside
    // [head_, tail_), so the consumer does not touch it.
    return slots_[(tail_ + i) % slots_.size()];
  }
  // Producer: appends the first `n` slots back() gave, in order.
  void push(std::size_t n) {
    if (n == 0) return;
    {
      std::lock_guard lock(mutex_);
      tail_ += n;
    }
    pushed_.notify_one();
  }

  // Producer: no more entries. The consumer still gets the queued ones.
  void close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    pushed_.notify_one();
  }

  // Producer: sleeps until the consumer pops an entry or `timeout` passes.
  void wait_for_pop(std::chrono::nanoseconds timeout) {
    std::unique_lock lock(mutex_);
    const std::size_t seen = head_;
    popped_.wait_for(lock, timeout, [&] { return head_ != seen; });
  }

  // Consumer: waits for entries and returns how many are queued (0: the
  // queue is closed and empty). They stay in their slots until pop().
  [[nodiscard]] std::size_t wait_front() {
    std::unique_lock lock(mutex_);
    pushed_.wait(lock, [&] { return head_ != tail_ || closed_; });
    return tail_ - head_;
  }
  // Consumer: the i-th queued entry, i < wait_front()'s count less the
  // entries popped since.
  [[nodiscard]] T& front(std::size_t i) noexcept {
    // head_ is written only by this thread.
    return slots_[(head_ + i) % slots_.size()];
  }
  // Consumer: done with the first `n` entries, whose slots go back to the
  // producer as they are (empty what must not wait there first).
  void pop(std::size_t n) {
    if (n == 0) return;
    {
      std::lock_guard lock(mutex_);
      head_ += n;
    }
    popped_.notify_one();
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable pushed_;  // the consumer waits for an entry
  std::condition_variable popped_;  // the producer waits for room
  std::vector<T> slots_;
  std::size_t head_ = 0;  // under mutex_; the next entry to pop (written by the consumer)
  std::size_t tail_ = 0;  // under mutex_; where the next push goes (written by the producer)
  bool closed_ = false;   // under mutex_
};

}  // namespace ferry::cli

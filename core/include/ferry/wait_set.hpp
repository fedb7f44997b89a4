#pragma once
/// @file
/// Waiting on many inputs (docs/waiting.md): one sleep for up to 64 subscribers
/// of any sample types, woken by any of their publishers, by notify(), or by
/// a change that try_take() has to report (the node declared dead, a
/// publisher gone); and a file descriptor for event loops.

#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "ferry/detail/ports.hpp"
#include "ferry/error.hpp"
#include "ferry/raw.hpp"
#include "ferry/service.hpp"
#include "ferry/subscriber.hpp"

namespace ferry {

/// What wait() found: the attachment indexes that are ready (a 64-bit mask,
/// so nothing is allocated), and whether notify() was called. Iterating
/// gives the ready indexes in increasing order.
class Ready {
 public:
  /// Walks the ready indexes, lowest first.
  class iterator {
   public:
    using value_type = std::size_t;          ///< an attachment index
    using difference_type = std::ptrdiff_t;  ///< as iterators require
    iterator() = default;
    /// The indexes of the set bits of `rest`.
    explicit iterator(std::uint64_t rest) : rest_(rest) {}
    /// The current index.
    std::size_t operator*() const noexcept {
      return static_cast<std::size_t>(std::countr_zero(rest_));
    }
    /// The next index.
    ///@{
    iterator& operator++() noexcept {
      rest_ &= rest_ - 1;  // drop the lowest index
      return *this;
    }
    iterator operator++(int) noexcept {
      iterator before = *this;
      ++*this;
      return before;
    }
    ///@}
    /// Equal when the same indexes are left.
    bool operator==(const iterator&) const = default;

   private:
    std::uint64_t rest_ = 0;
  };

  Ready() = default;
  /// Bit i of `mask` set: attachment i is ready.
  Ready(std::uint64_t mask, bool notified) : mask_(mask), notified_(notified) {}
  /// The first ready index.
  [[nodiscard]] iterator begin() const noexcept { return iterator(mask_); }
  /// Past the last ready index.
  [[nodiscard]] iterator end() const noexcept { return iterator(0); }
  /// Whether attachment `index` is ready.
  [[nodiscard]] bool contains(std::size_t index) const noexcept {
    return index < 64 && (mask_ >> index & 1U) != 0;
  }
  /// No attachment ready (notify() alone, a timeout, or a rare spurious return).
  [[nodiscard]] bool empty() const noexcept { return mask_ == 0; }
  /// How many attachments are ready.
  [[nodiscard]] std::size_t size() const noexcept {
    return static_cast<std::size_t>(std::popcount(mask_));
  }
  /// notify() was called since the last wait().
  [[nodiscard]] bool notified() const noexcept { return notified_; }
  /// The ready indexes as a bit mask (bit i: attachment i).
  [[nodiscard]] std::uint64_t mask() const noexcept { return mask_; }

 private:
  std::uint64_t mask_ = 0;
  bool notified_ = false;
};

/// One sleep for up to 64 subscribers of any sample types. Use wait() and
/// attach/detach on the thread that uses the attached subscribers; notify()
/// from any thread or a signal handler. A subscriber destroyed while attached
/// (on any thread) detaches itself and wakes wait(), which reports its index
/// once. Not movable: signal handlers may hold it. A process forked after
/// the WaitSet was made has a copy that belongs to the parent, as its nodes
/// do: there wait(), fd() and attach() throw ferry::Error, notify() does
/// nothing, and destroying the copy (or an attached subscriber's) touches
/// nothing the parent uses.
class WaitSet {
 public:
  /// The most subscribers attached at once.
  static constexpr std::size_t kMaxAttachments = 64;

  /// An empty WaitSet.
  WaitSet();
  /// Detaches every subscriber (and stops fd()'s helper thread).
  ~WaitSet();
  WaitSet(const WaitSet&) = delete;
  WaitSet& operator=(const WaitSet&) = delete;

  /// Attaches a subscriber; returns the attachment's index: the lowest free
  /// one (0, 1, ... in attach order while nothing is detached). Throws
  /// ferry::Error past kMaxAttachments, for a subscriber attached already
  /// (here or to another WaitSet), or a moved-from one.
  ///@{
  template <class T>
  std::size_t attach(Subscriber<T>& subscriber) {
    return attach_port(subscriber.port_.get());
  }
  std::size_t attach(RawSubscriber& subscriber) { return attach_port(subscriber.port_.get()); }
  /// A server is ready while a request waits; a client while a response
  /// does (docs/services.md).
  template <class Req, class Resp>
  std::size_t attach(Server<Req, Resp>& server) {
    return attach_port(&detail::server_requests(*server.core_));
  }
  template <class Req, class Resp>
  std::size_t attach(Client<Req, Resp>& client) {
    return attach_port(&detail::client_responses(*client.core_));
  }
  /// The untyped service ports (Node::raw_server, Node::raw_client), as
  /// the typed ones.
  std::size_t attach(detail::ServerCore& server) {
    return attach_port(&detail::server_requests(server));
  }
  std::size_t attach(detail::ClientCore& client) {
    return attach_port(&detail::client_responses(client));
  }
  void detach(detail::ServerCore& server) { detach_port(&detail::server_requests(server)); }
  void detach(detail::ClientCore& client) { detach_port(&detail::client_responses(client)); }
  template <class Req, class Resp>
  void detach(Server<Req, Resp>& server) {
    detach_port(&detail::server_requests(*server.core_));
  }
  template <class Req, class Resp>
  void detach(Client<Req, Resp>& client) {
    detach_port(&detail::client_responses(*client.core_));
  }
  ///@}
  /// Detaches a subscriber. Throws ferry::Error when it is not attached here.
  ///@{
  template <class T>
  void detach(Subscriber<T>& subscriber) {
    detach_port(subscriber.port_.get());
  }
  void detach(RawSubscriber& subscriber) { detach_port(subscriber.port_.get()); }
  ///@}

  /// Returns at once with the ready attachments; else sleeps (no CPU, one
  /// futex_waitv over every attachment's doorbell) until one is ready,
  /// notify() is called, or `timeout` passes (then empty). Level-triggered:
  /// an attachment stays ready while it has a queued sample. Allocates nothing.
  Ready wait(std::chrono::nanoseconds timeout);
  /// Wakes wait() and makes fd() readable: any thread, async-signal-safe.
  void notify() noexcept;
  /// A descriptor (owned by the WaitSet) that is readable while an
  /// attachment was ready at the last wait(), something arrived since, or
  /// after notify(). Poll it, then call wait(0): that reads the descriptor
  /// clear and re-arms it. The first call starts one helper thread that
  /// sleeps on the doorbells while the caller sleeps on the descriptor.
  int fd();
  /// How many subscribers are attached.
  [[nodiscard]] std::size_t size() const noexcept;
  /// Whether a subscriber is attached at `index` (false once it was detached
  /// or destroyed).
  [[nodiscard]] bool attached(std::size_t index) const noexcept;

 private:
  std::size_t attach_port(detail::SubscriberPort* port);
  void detach_port(detail::SubscriberPort* port);

  std::shared_ptr<detail::WaitSetCore> core_;
};

}  // namespace ferry

// WaitSet: one futex_waitv(2) sleep over the doorbells of every attached
// subscriber and the WaitSet's own word. Publishers are unchanged: they ring
// their subscriber's doorbell as for take(timeout), and only when its
// `sleeping` count says somebody sleeps there (we raise it on each doorbell
// before sleeping, with the same handshake: docs/design/wait.md).
#include "ferry/wait_set.hpp"

#include <fmt/format.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <string_view>
#include <system_error>
#include <vector>

#include "fork_guard.hpp"
#include "wait_set_core.hpp"

namespace ferry {

namespace {

using detail::SleepWords;
using detail::WaitSetCore;

// Far enough to mean "until woken": the helper has no periodic wake-up.
constexpr std::chrono::hours kForever{24};

template <class F>
void for_each_bit(std::uint64_t mask, F&& f) {
  while (mask != 0) {
    f(static_cast<std::size_t>(std::countr_zero(mask)));
    mask &= mask - 1;
  }
}

void drain_fd(int fd) noexcept {
  std::uint64_t count = 0;
  [[maybe_unused]] const auto n = ::read(fd, &count, sizeof count);  // EAGAIN when clear
}

// The helper behind fd(): sleeps on the doorbells while the user sleeps on
// the eventfd, and makes the eventfd readable when any of them rings.
void run_helper(WaitSetCore& c) {
  std::uint32_t gen_seen = 0;
  SleepWords words;
  while (true) {
    // SYNC: seq_cst, pairs with the seq_cst fetch_add on helper_gen in
    // hand_to_helper() and ~WaitSet (a bump after this load fails the futex compare).
    while (c.helper_gen.load(std::memory_order_seq_cst) == gen_seen) {
      transport::futex_wait(c.helper_gen, gen_seen, kForever);
    }
    gen_seen = c.helper_gen.load(std::memory_order_seq_cst);  // SYNC: as above
    {
      std::lock_guard lock(c.mutex);
      if (c.closed) return;
      if (!c.helper_sleeping) continue;
      words = c.helper_words;
    }
    transport::futex_wait_any(words.words.data(), words.seen.data(), words.count,
                              std::min<std::chrono::nanoseconds>(kForever, words.bound));
    bool closed = false;
    {
      std::lock_guard lock(c.mutex);
      c.disarm(c.helper_armed);
      c.helper_sleeping = false;
      closed = c.closed;
    }
    if (closed) return;
    c.signal_fd();
  }
}

}  // namespace

namespace detail {

WaitSetCore::WaitSetCore() : generation((track_forks(), fork_generation())) {}

bool WaitSetCore::inherited() const noexcept { return fork_generation() != generation; }

void WaitSetCore::arm(std::uint64_t& armed, SleepWords& out) noexcept {
  for_each_bit(used & ~armed,
               [&](std::size_t i) { transport::doorbell_announce_sleep(*slots[i].bell); });
  armed |= used;
  // SYNC: pairs with notifier_fence() in doorbell_notify (publishers and
  // the runtime thread): either they see our `sleeping` count and wake us,
  // or our readiness check after this sees their data.
  const bool sure = transport::waiter_fence();
  out.bound = sure ? std::chrono::nanoseconds::max()
                   : std::chrono::nanoseconds(transport::kUnsureSleepBound);
  out.count = 0;
  for_each_bit(used, [&](std::size_t i) {
    out.words[out.count] = &slots[i].bell->seq;
    // SYNC: acquire, pairs with the release fetch_add in doorbell_notify;
    // read before the readiness check, so a ring after it fails the futex compare.
    out.seen[out.count] = slots[i].bell->seq.load(std::memory_order_acquire);
    ++out.count;
  });
  out.words[out.count] = &wake;
  // SYNC: seq_cst, pairs with the seq_cst fetch_add in wake_all().
  out.seen[out.count] = wake.load(std::memory_order_seq_cst);
  ++out.count;
}

void WaitSetCore::disarm(std::uint64_t& armed) noexcept {
  for_each_bit(armed & used, [&](std::size_t i) { transport::doorbell_end_sleep(*slots[i].bell); });
  armed = 0;
}

std::uint64_t WaitSetCore::collect() noexcept {
  std::uint64_t ready = gone;
  gone = 0;
  for_each_bit(used, [&](std::size_t i) {
    if (slots[i].port->wait_ready()) ready |= std::uint64_t{1} << i;
  });
  return ready;
}

void WaitSetCore::wake_all() noexcept {
  // SYNC: seq_cst, pairs with the seq_cst load of `wake` in arm(): a sleep
  // armed before this bump fails its futex compare or is woken below.
  wake.fetch_add(1, std::memory_order_seq_cst);
  transport::futex_wake(wake);
}

void WaitSetCore::signal_fd() noexcept {
  // A forked child's copy of the descriptor is the parent's open eventfd.
  if (inherited()) [[unlikely]]
    return;
  // SYNC: acquire, pairs with the release store in WaitSet::fd().
  const int fd = event_fd.load(std::memory_order_acquire);
  if (fd < 0) return;
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto n = ::write(fd, &one, sizeof one);  // async-signal-safe
}

void wait_set_port_gone(SubscriberPort& port) noexcept {
  // Our own reference: the core outlives the lock even when we held the last.
  const std::shared_ptr<WaitSetCore> core = std::move(port.wait_set);
  // A forked child's copy of an inherited WaitSet: the counts on the
  // doorbell are the parent's sleeps, and its mutex may be held for good.
  if (core->inherited()) return;
  std::lock_guard lock(core->mutex);
  const std::size_t i = port.wait_index;
  if (core->closed || core->slots[i].port != &port) return;
  const std::uint64_t bit = std::uint64_t{1} << i;
  // Our counts on its doorbell go now: it is unmapped after we return.
  if ((core->waiter_armed & bit) != 0) transport::doorbell_end_sleep(*core->slots[i].bell);
  if ((core->helper_armed & bit) != 0) transport::doorbell_end_sleep(*core->slots[i].bell);
  core->waiter_armed &= ~bit;
  core->helper_armed &= ~bit;
  core->used &= ~bit;
  core->gone |= bit;
  core->slots[i] = {};
  // Still under the lock: ~WaitSet sets `closed` under it before it closes
  // the eventfd, so while we hold it and saw `closed` false the descriptor
  // is open and ours to write. (After the unlock, ~WaitSet on another
  // thread could close it, and the number be reused by any file.)
  core->wake_all();
  core->signal_fd();
}

}  // namespace detail

WaitSet::WaitSet() : core_(std::make_shared<WaitSetCore>()) {}

namespace {

// What a forked child's WaitSet and its ports refuse to do (WaitSetCore::inherited()).
void refuse_if_inherited(const WaitSetCore& c, std::string_view what) {
  if (!c.inherited()) return;
  throw Error(fmt::format(
      "cannot {} a WaitSet made before this process was forked: it belongs to the parent "
      "process; make a new ferry::WaitSet (and ferry::Node) in the child",
      what));
}

}  // namespace

WaitSet::~WaitSet() {
  WaitSetCore& c = *core_;
  if (c.inherited()) {
    // A forked child's copy: no lock (it may have been held at the fork),
    // no doorbell count (they are the parent's sleeps), no join (the helper
    // thread is the parent's). The thread object is kept, reachable, for
    // good: destroying it unjoined would terminate the child. Closing our
    // descriptor of the eventfd is ours to do (the parent keeps its own).
    if (c.helper.joinable()) {
      static auto* kept = new std::vector<std::thread>;
      kept->push_back(std::move(c.helper));
    }
    // SYNC: relaxed; the child's copy is used by this thread only.
    const int fd = c.event_fd.exchange(-1, std::memory_order_relaxed);
    if (fd >= 0) ::close(fd);
    return;
  }
  {
    std::lock_guard lock(c.mutex);
    c.disarm(c.waiter_armed);
    c.disarm(c.helper_armed);
    c.closed = true;
    // Ports keep their reference to the core (they may be destroyed on
    // another thread right now); they find it closed and only let go.
    c.used = 0;
  }
  c.wake_all();
  // SYNC: seq_cst, pairs with the helper's seq_cst load of helper_gen.
  c.helper_gen.fetch_add(1, std::memory_order_seq_cst);
  transport::futex_wake(c.helper_gen);
  if (c.helper.joinable()) c.helper.join();
  // SYNC: relaxed; nobody calls notify() on a WaitSet being destroyed.
  const int fd = c.event_fd.exchange(-1, std::memory_order_relaxed);
  if (fd >= 0) ::close(fd);
}

std::size_t WaitSet::attach_port(detail::SubscriberPort* port) {
  if (port == nullptr) {
    throw Error("cannot attach a moved-from subscriber to a WaitSet: it has no topic any more");
  }
  WaitSetCore& c = *core_;
  refuse_if_inherited(c, "attach a subscriber to");
  if (port->inherited()) {
    // Its doorbell's counts are the parent's sleeps.
    throw Error(fmt::format(
        "cannot attach the subscriber of topic '{}' to a WaitSet: its node belongs to the process "
        "this one was forked from; create a new ferry::Node in the child",
        port->topic()));
  }
  if (port->wait_set == core_) {
    throw Error(
        fmt::format("the subscriber of topic '{}' is already attached to this WaitSet (index {})",
                    port->topic(), port->wait_index));
  }
  if (port->wait_set) {
    bool other_closed = false;
    {
      std::lock_guard lock(port->wait_set->mutex);
      other_closed = port->wait_set->closed;
    }
    if (!other_closed) {
      throw Error(fmt::format(
          "the subscriber of topic '{}' is attached to another WaitSet; detach it there first",
          port->topic()));
    }
    port->wait_set.reset();  // that WaitSet is gone
  }
  std::size_t index = 0;
  bool helper_sleeping = false;
  {
    std::lock_guard lock(c.mutex);
    if (c.used == ~std::uint64_t{0}) {
      throw Error(
          fmt::format("cannot attach the subscriber of topic '{}': the WaitSet already has {} "
                      "attachments, its limit",
                      port->topic(), kMaxAttachments));
    }
    index = static_cast<std::size_t>(std::countr_one(c.used));
    const std::uint64_t bit = std::uint64_t{1} << index;
    c.slots[index] = {port, &port->doorbell()};
    c.used |= bit;
    c.gone &= ~bit;
    port->wait_set = core_;
    port->wait_index = index;
    port->forget_changes();
    helper_sleeping = c.helper_sleeping;
  }
  // The helper's sleep does not cover the newcomer: wake it (it sleeps on
  // `wake` too). It then lets its sleep go (helper_sleeping false) and makes
  // fd() readable, and the user's next wait(0) arms a sleep over every
  // attachment. (Only making fd() readable is not enough: a wait(0) that
  // finds the helper still sleeping arms nothing, and the newcomer's
  // samples would ring a doorbell nobody sleeps on.)
  if (helper_sleeping) c.wake_all();
  return index;
}

void WaitSet::detach_port(detail::SubscriberPort* port) {
  if (port == nullptr) throw Error("cannot detach a moved-from subscriber from a WaitSet");
  if (port->wait_set != core_) {
    throw Error(
        fmt::format("the subscriber of topic '{}' is not attached to this WaitSet", port->topic()));
  }
  WaitSetCore& c = *core_;
  if (c.inherited()) {
    // A forked child lets go of its copy; nothing shared is touched.
    port->wait_set.reset();
    return;
  }
  {
    std::lock_guard lock(c.mutex);
    const std::size_t i = port->wait_index;
    const std::uint64_t bit = std::uint64_t{1} << i;
    if ((c.waiter_armed & bit) != 0) transport::doorbell_end_sleep(*c.slots[i].bell);
    if ((c.helper_armed & bit) != 0) transport::doorbell_end_sleep(*c.slots[i].bell);
    c.waiter_armed &= ~bit;
    c.helper_armed &= ~bit;
    c.used &= ~bit;
    c.slots[i] = {};
  }
  port->wait_set.reset();
}

std::size_t WaitSet::size() const noexcept {
  // A forked child's copy: no lock (see ~WaitSet); nothing changes it there.
  if (core_->inherited()) return static_cast<std::size_t>(std::popcount(core_->used));
  std::lock_guard lock(core_->mutex);
  return static_cast<std::size_t>(std::popcount(core_->used));
}

bool WaitSet::attached(std::size_t index) const noexcept {
  if (index >= kMaxAttachments) return false;
  if (core_->inherited()) return (core_->used >> index & 1U) != 0;  // as in size()
  std::lock_guard lock(core_->mutex);
  return (core_->used >> index & 1U) != 0;
}

void WaitSet::notify() noexcept {
  WaitSetCore& c = *core_;
  // SYNC: seq_cst, pairs with the seq_cst exchange in wait(): a notify that
  // wait() misses there bumped `wake` after wait() read it (arm()).
  c.notified.store(1, std::memory_order_seq_cst);
  c.wake_all();
  c.signal_fd();
}

int WaitSet::fd() {
  WaitSetCore& c = *core_;
  refuse_if_inherited(c, "get the descriptor of");
  // SYNC: relaxed; only this (the user's) thread stores it.
  if (const int fd = c.event_fd.load(std::memory_order_relaxed); fd >= 0) return fd;
  const int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd < 0) {
    throw Error(fmt::format("WaitSet::fd(): cannot create an eventfd: {}",
                            std::error_code(errno, std::system_category()).message()));
  }
  // SYNC: release, pairs with the acquire load in signal_fd().
  c.event_fd.store(fd, std::memory_order_release);
  c.helper = std::thread([&c] { run_helper(c); });
  (void)wait(std::chrono::nanoseconds::zero());  // arms the helper, or signals what is ready now
  return fd;
}

Ready WaitSet::wait(std::chrono::nanoseconds timeout) {
  WaitSetCore& c = *core_;
  refuse_if_inherited(c, "wait on");
  // SYNC: relaxed; stored by this thread.
  const int event_fd = c.event_fd.load(std::memory_order_relaxed);
  if (event_fd >= 0) drain_fd(event_fd);
  std::uint64_t mask = 0;
  bool notified = false;
  std::chrono::steady_clock::time_point deadline{};
  bool deadline_set = false;
  detail::SleepWords words;
  std::unique_lock lock(c.mutex);
  while (true) {
    mask = c.collect();
    // SYNC: seq_cst, pairs with the seq_cst store in notify().
    notified = c.notified.exchange(0, std::memory_order_seq_cst) != 0;
    if (mask != 0 || notified || timeout.count() <= 0) break;
    if (!deadline_set) {
      deadline = std::chrono::steady_clock::now() + timeout;  // the clock only once we may sleep
      deadline_set = true;
    }
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) break;
    c.arm(c.waiter_armed, words);
    // After the handshake: data that came before it is seen here, data
    // after it rings a doorbell we sleep on.
    mask = c.collect();
    notified = c.notified.exchange(0, std::memory_order_seq_cst) != 0;  // SYNC: as above
    if (mask != 0 || notified) {
      c.disarm(c.waiter_armed);
      break;
    }
    lock.unlock();
    const auto left_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left);
    const bool bounded = words.bound < left_ns;  // a short sleep: look again after it
    const auto slept = transport::futex_wait_any(words.words.data(), words.seen.data(), words.count,
                                                 bounded ? words.bound : left_ns);
    lock.lock();
    c.disarm(c.waiter_armed);
    if (slept == transport::FutexResult::TimedOut && !bounded) {
      mask = c.collect();
      notified = c.notified.exchange(0, std::memory_order_seq_cst) != 0;  // SYNC: as above
      break;
    }
  }
  if (event_fd >= 0) {
    if (mask != 0) {
      // Level-triggered: the descriptor stays readable while something was
      // ready (a notify() is reported once, like a Ready's notified()).
      c.signal_fd();
    } else if (!c.helper_sleeping) {
      // Nothing ready: the helper sleeps on the doorbells for the user,
      // who sleeps on the descriptor.
      c.arm(c.helper_armed, c.helper_words);
      const std::uint64_t late = c.collect();
      if (late != 0) {
        c.disarm(c.helper_armed);
        c.signal_fd();
        return Ready(late, notified);
      }
      c.helper_sleeping = true;
      // SYNC: seq_cst, pairs with the helper's seq_cst load of helper_gen.
      c.helper_gen.fetch_add(1, std::memory_order_seq_cst);
      transport::futex_wake(c.helper_gen);
    }
  }
  return Ready(mask, notified);
}

}  // namespace ferry

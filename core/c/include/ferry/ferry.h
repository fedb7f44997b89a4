/// @file ferry.h
/// @brief ferry's C API: publish/subscribe through shared memory, from C11
/// and from every language that can call C.
///
/// It binds the C++ API (ferry/ferry.hpp) one to one: a node joins a domain
/// served by ferryd; publishers and subscribers are created with the type's
/// name, size and alignment, checked against the topic as in C++; samples
/// are published by copy or by loan and taken with a timeout.
///
/// Every function that can fail returns a ::ferry_error_t; ::FERRY_OK is 0.
/// On failure, ferry_last_error() gives this thread's sentence about it. No
/// C++ exception ever crosses into the caller; a NULL handle or a wrong size
/// is an error value, never a crash.
///
/// Hot path (ferry_publish(), ferry_publish_many(), ferry_loan(),
/// ferry_publish_loan(), ferry_loan_many(), ferry_publish_loan_many(),
/// ferry_take(), ferry_take_many(), ferry_sample_release()): no heap allocation, no lock, no system
/// call unless a sleeping peer must be woken or the caller asked to wait.
///
/// Ownership, in one line each (the user guide, docs/c-api.md, says more):
/// a node, publisher, subscriber or waitset is the caller's until its
/// `_destroy`; a sample is the caller's until ferry_sample_release() (any
/// thread, also after its subscriber is destroyed); a loan is the caller's
/// until ferry_publish_loan() or ferry_loan_return() on its publisher's
/// thread, and goes back to the pool when its publisher is destroyed; a
/// batch of loans likewise, until ferry_publish_loan_many() or
/// ferry_loan_batch_return().
#ifndef FERRY_FERRY_H
#define FERRY_FERRY_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
/// Marks a function of the C API as exported from libferry_c.
#define FERRY_C_API __attribute__((visibility("default")))
#else
/// Marks a function of the C API as exported from libferry_c.
#define FERRY_C_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/// What a call did. FERRY_OK is 0; the values 1 to 99 are the C++
/// `ferry::ErrorCode` values plus one (the C++ side checks that they stay
/// so), 100 and up are the C API's own. ferry_error_name() names each,
/// ferry_last_error() says what happened.
typedef enum ferry_error_t {
  /// Success.
  FERRY_OK = 0,
  /// The subscriber holds max_held samples already: release one.
  FERRY_ERROR_TOO_MANY_HELD = 1,
  /// The publisher holds max_loans unpublished loans already.
  FERRY_ERROR_TOO_MANY_LOANS = 2,
  /// The pool has no free chunk of a fitting size class.
  FERRY_ERROR_POOL_EXHAUSTED = 3,
  /// The payload exceeds the topic's sample size or max_size.
  FERRY_ERROR_TOO_LARGE = 4,
  /// The port was destroyed or its node left the domain.
  FERRY_ERROR_PORT_CLOSED = 5,
  /// ferryd declared this node dead (missed heartbeats); create a new port
  /// to join the domain again.
  FERRY_ERROR_NODE_DECLARED_DEAD = 6,
  /// A peer wrote invalid data into shared memory.
  FERRY_ERROR_CORRUPT_DATA = 7,
  /// The node belongs to the process this one was forked from.
  FERRY_ERROR_INHERITED_NODE = 8,
  /// The service has no server (services: docs/services.md).
  FERRY_ERROR_NO_SERVER = 9,
  /// A call's response did not come in time.
  FERRY_ERROR_TIMEOUT = 10,
  /// The server died or left with the call pending.
  FERRY_ERROR_SERVER_GONE = 11,
  /// The client has the service's capacity of calls in flight already.
  FERRY_ERROR_TOO_MANY_PENDING = 12,
  /// The server dropped the request without answering it.
  FERRY_ERROR_NO_RESPONSE = 13,
  /// A NULL handle or pointer, a wrong size, a sample released twice, a
  /// loan of another publisher: the caller's mistake, nothing was done.
  FERRY_ERROR_INVALID_ARGUMENT = 100,
  /// ferry refused the request: ferryd is not running, the topic's type
  /// differs, a limit (max_publishers...) is reached, the topic is unknown
  /// under `strict`, the subscriber is attached already. The sentence says
  /// which, and the fix.
  FERRY_ERROR_REFUSED = 101,
  /// Memory ran out while creating a handle.
  FERRY_ERROR_NO_MEMORY = 102,
  /// An unexpected failure inside ferry (a bug: please report the sentence).
  FERRY_ERROR_INTERNAL = 103
} ferry_error_t;

/// A participant in a domain: one connection to ferryd (ferry::Node).
typedef struct ferry_node_s ferry_node_t;
/// Publishes samples on one topic (ferry::RawPublisher). One thread at a time.
typedef struct ferry_publisher_s ferry_publisher_t;
/// Takes samples from one topic (ferry::RawSubscriber). One thread at a time.
typedef struct ferry_subscriber_s ferry_subscriber_t;
/// A taken sample, valid until ferry_sample_release().
typedef struct ferry_sample_s ferry_sample_t;
/// A pool chunk to write a sample into, then ferry_publish_loan().
typedef struct ferry_loan_s ferry_loan_t;
/// Many samples to write in place, then ferry_publish_loan_many(); a
/// publisher has at most one out at a time.
typedef struct ferry_loan_batch_s ferry_loan_batch_t;
/// Waits on up to 64 subscribers at once (ferry::WaitSet).
typedef struct ferry_waitset_s ferry_waitset_t;

/// What became of one publish, counted in subscriber queues (for a batch:
/// samples times queues).
typedef struct ferry_publish_result_t {
  /// Queues that took it (overwritten ones included).
  uint32_t delivered;
  /// drop_new: queues that were full and refused it.
  uint32_t dropped;
  /// drop_oldest: queues that discarded their oldest sample to take it.
  uint32_t overwritten;
  /// block: queues still full at block_timeout_ms.
  uint32_t timed_out;
} ferry_publish_result_t;

/// What a subscriber learns about each sample besides its bytes.
typedef struct ferry_sample_info_t {
  /// Per publisher: 0, 1, 2, ... one per publish (a gap: samples this
  /// subscriber did not get).
  uint64_t sequence;
  /// Unique in the domain while the publisher lives.
  uint64_t publisher_id;
  /// CLOCK_REALTIME at publish, in nanoseconds.
  uint64_t publish_time_ns;
} ferry_sample_info_t;

/// The type name of a `type: bytes` topic: create its ports with this name,
/// size 0 and alignment 1; samples then have any size up to max_size.
#define FERRY_BYTES_TYPE "ferry::Bytes"

/// The most subscribers one waitset can hold.
#define FERRY_WAITSET_CAPACITY 64

/// This thread's sentence about its last failed call ("" before any). It
/// stays valid until this thread's next failing call.
/// @return A sentence, never NULL.
FERRY_C_API const char* ferry_last_error(void);

/// The enumerator's name without its prefix, e.g. "POOL_EXHAUSTED"; "UNKNOWN"
/// for a value that is none of them. A static string.
/// @param error A value a call returned.
/// @return A static string, never NULL.
FERRY_C_API const char* ferry_error_name(ferry_error_t error);

/// Joins a domain: connects to its ferryd. `name` names the node in
/// `ferry node list`; `domain` NULL or "" means $FERRY_DOMAIN, else
/// "default". FERRY_ERROR_REFUSED when ferryd cannot be reached (the
/// sentence names the socket and how to start ferryd).
/// @param name The node's name (shown by `ferry node list`).
/// @param domain The domain to join; NULL or "" for $FERRY_DOMAIN, else "default".
/// @param node Receives the node (NULL on failure).
/// @return FERRY_OK, or the error (see ferry_last_error()).
FERRY_C_API ferry_error_t ferry_node_create(const char* name, const char* domain,
                                            ferry_node_t** node);

/// Leaves the domain once the node's publishers and subscribers are
/// destroyed too (they keep the connection while they live). NULL: nothing
/// happens.
/// @param node The node, or NULL.
FERRY_C_API void ferry_node_destroy(ferry_node_t* node);

/// Creates a publisher on `topic` for samples of the named type, `size`
/// bytes aligned to `alignment` (sizeof and _Alignof of your struct). The
/// topic's declared type must have that name, size and alignment, else
/// FERRY_ERROR_REFUSED with both sides in the sentence; an undeclared topic
/// (when the domain is not strict) is created with this type.
/// @param node The node the port belongs to.
/// @param topic The topic name, e.g. "robot/pose".
/// @param type_name The type's name as the YAML declares it (FERRY_BYTES_TYPE for a bytes topic).
/// @param size The sample size in bytes: sizeof your struct (0 for a bytes topic).
/// @param alignment The alignment of the struct: _Alignof (1 for a bytes topic).
/// @param publisher Receives the publisher (NULL on failure).
/// @return FERRY_OK, or the error (see ferry_last_error()).
FERRY_C_API ferry_error_t ferry_publisher_create(ferry_node_t* node, const char* topic,
                                                 const char* type_name, size_t size,
                                                 size_t alignment, ferry_publisher_t** publisher);

/// Destroys a publisher; its unpublished loans go back to the pool and
/// their handles become invalid. NULL: nothing happens.
/// @param publisher The publisher, or NULL.
FERRY_C_API void ferry_publisher_destroy(ferry_publisher_t* publisher);

/// Copies one sample of `size` bytes (the topic's sample size; a bytes
/// topic: up to its max_size) into every matched subscriber's queue,
/// applying the topic's full-queue policy. `result` may be NULL. A wrong
/// size is FERRY_ERROR_INVALID_ARGUMENT and sends nothing.
/// @param publisher The publisher.
/// @param data The sample.
/// @param size Its size in bytes.
/// @param result Receives what became of the sample (may be NULL).
/// @return FERRY_OK, or the error (see ferry_last_error()).
FERRY_C_API ferry_error_t ferry_publish(ferry_publisher_t* publisher, const void* data, size_t size,
                                        ferry_publish_result_t* result);

/// Publishes `count` samples of `sample_size` bytes each, back to back at
/// `samples`, in order: one index store and at most one wake-up per queue
/// and batch. `sample_size` must be the topic's sample size (no bytes
/// topics); `count` 0 does nothing. `result` (may be NULL) counts samples
/// times queues.
/// @param publisher The publisher.
/// @param samples The samples, back to back.
/// @param count How many samples.
/// @param sample_size Each sample's size: the topic's sample size.
/// @param result Receives what became of the sample (may be NULL).
/// @return FERRY_OK, or the error (see ferry_last_error()).
FERRY_C_API ferry_error_t ferry_publish_many(ferry_publisher_t* publisher, const void* samples,
                                             size_t count, size_t sample_size,
                                             ferry_publish_result_t* result);

/// Loans a pool chunk for one sample of the topic's sample size: write the
/// sample at `*data` (aligned for the type), then ferry_publish_loan().
/// FERRY_ERROR_TOO_MANY_LOANS, FERRY_ERROR_POOL_EXHAUSTED when none is
/// free. Not for bytes topics (use ferry_publish()).
/// @param publisher The publisher.
/// @param loan Receives the loan handle (NULL on failure).
/// @param data Receives where to write the sample (NULL on failure).
/// @return FERRY_OK, or the error (see ferry_last_error()).
FERRY_C_API ferry_error_t ferry_loan(ferry_publisher_t* publisher, ferry_loan_t** loan,
                                     void** data);

/// Publishes a loan of this publisher without copying it; the loan is
/// consumed, also when the call fails. `result` may be NULL. A loan
/// published or returned already, or of another publisher, is
/// FERRY_ERROR_INVALID_ARGUMENT.
/// @param publisher The publisher.
/// @param loan The loan.
/// @param result Receives what became of the sample (may be NULL).
/// @return FERRY_OK, or the error (see ferry_last_error()).
FERRY_C_API ferry_error_t ferry_publish_loan(ferry_publisher_t* publisher, ferry_loan_t* loan,
                                             ferry_publish_result_t* result);

/// Gives an unpublished loan back to the pool, unsent.
/// @param publisher The publisher.
/// @param loan The loan.
/// @return FERRY_OK, or the error (see ferry_last_error()).
FERRY_C_API ferry_error_t ferry_loan_return(ferry_publisher_t* publisher, ferry_loan_t* loan);

/// Loans `count` samples of the topic's sample size to write in place, then
/// publish them with ferry_publish_loan_many() as ferry_publish_many()
/// publishes an array (docs/batches.md). Samples that fit a ring slot lie
/// back to back in the publisher's own batch buffer (`*data` is then an
/// array of `count` samples; up to the topic's capacity; the batch counts
/// as one loan); larger ones are a pool chunk each (`*data` is NULL: use
/// ferry_loan_batch_sample(); up to max_loans, each a loan). One batch at a
/// time per publisher. FERRY_ERROR_TOO_MANY_LOANS (a batch is out, or
/// max_loans would be passed), FERRY_ERROR_INVALID_ARGUMENT (more samples
/// than the batch can hold; a bytes topic), FERRY_ERROR_POOL_EXHAUSTED
/// (then nothing is loaned). `count` 0 gives an empty batch.
/// @param publisher The publisher.
/// @param count How many samples.
/// @param batch Receives the batch handle (NULL on failure).
/// @param data Receives the samples' array, or NULL (pooled samples, or failure).
/// @return FERRY_OK, or the error (see ferry_last_error()).
FERRY_C_API ferry_error_t ferry_loan_many(ferry_publisher_t* publisher, size_t count,
                                          ferry_loan_batch_t** batch, void** data);

/// Where to write sample `index` of a batch (aligned for the type); NULL
/// when `index` is not below its size or the batch is not out.
/// @param batch The batch.
/// @param index The sample's index.
/// @return The sample's memory, or NULL.
FERRY_C_API void* ferry_loan_batch_sample(const ferry_loan_batch_t* batch, size_t index);

/// How many samples a batch holds (0 when it is not out).
/// @param batch The batch.
/// @return The number of samples.
FERRY_C_API size_t ferry_loan_batch_size(const ferry_loan_batch_t* batch);

/// Keeps a batch's first `count` samples and gives the others back (pooled
/// samples' chunks return to the pool); a count of its size or more keeps all.
/// @param batch The batch.
/// @param count How many samples to keep.
/// @return FERRY_OK, or FERRY_ERROR_INVALID_ARGUMENT (no batch out).
FERRY_C_API ferry_error_t ferry_loan_batch_shrink(ferry_loan_batch_t* batch, size_t count);

/// Publishes a batch of this publisher in order, the policy per sample;
/// `result` (may be NULL) counts samples times queues. The batch is
/// consumed, also when the call fails; one not out, or of another
/// publisher, is FERRY_ERROR_INVALID_ARGUMENT.
/// @param publisher The publisher.
/// @param batch The batch.
/// @param result Receives what became of the samples (may be NULL).
/// @return FERRY_OK, or the error (see ferry_last_error()).
FERRY_C_API ferry_error_t ferry_publish_loan_many(ferry_publisher_t* publisher,
                                                  ferry_loan_batch_t* batch,
                                                  ferry_publish_result_t* result);

/// Gives an unpublished batch back, unsent.
/// @param publisher The publisher.
/// @param batch The batch.
/// @return FERRY_OK, or the error (see ferry_last_error()).
FERRY_C_API ferry_error_t ferry_loan_batch_return(ferry_publisher_t* publisher,
                                                  ferry_loan_batch_t* batch);

/// Subscribers whose queues this publisher has attached: a publish after
/// this returned N reaches those N. 0 for NULL (and an error sentence).
/// @param publisher The publisher.
/// @return The number of subscribers.
FERRY_C_API size_t ferry_publisher_subscriber_count(const ferry_publisher_t* publisher);

/// Waits until at least `count` subscribers are attached (as
/// ferry_publisher_subscriber_count()) or `timeout_ns` passed, polling; for
/// start-up, before the first publish. 0 for NULL (and an error sentence).
/// @param publisher The publisher.
/// @param count How many subscribers to wait for.
/// @param timeout_ns How long to wait at most, in nanoseconds.
/// @return The number of subscribers when it returns: `count` or more
///         unless the time ran out.
FERRY_C_API size_t ferry_publisher_wait_for_subscribers(const ferry_publisher_t* publisher,
                                                        size_t count, uint64_t timeout_ns);

/// The publisher_id of every sample this publisher sends; 0 for NULL.
/// @param publisher The publisher.
/// @return The publisher id.
FERRY_C_API uint64_t ferry_publisher_id(const ferry_publisher_t* publisher);

/// Creates a subscriber on `topic` for samples of the named type, `size`
/// bytes aligned to `alignment`, checked as ferry_publisher_create() does.
/// @param node The node the port belongs to.
/// @param topic The topic name, e.g. "robot/pose".
/// @param type_name The type's name as the YAML declares it (FERRY_BYTES_TYPE for a bytes topic).
/// @param size The sample size in bytes: sizeof your struct (0 for a bytes topic).
/// @param alignment The alignment of the struct: _Alignof (1 for a bytes topic).
/// @param subscriber Receives the subscriber (NULL on failure).
/// @return FERRY_OK, or the error (see ferry_last_error()).
FERRY_C_API ferry_error_t ferry_subscriber_create(ferry_node_t* node, const char* topic,
                                                  const char* type_name, size_t size,
                                                  size_t alignment,
                                                  ferry_subscriber_t** subscriber);

/// Destroys a subscriber: it leaves its waitset, its unread samples are
/// dropped. Samples it handed out stay valid until each is released. NULL:
/// nothing happens.
/// @param subscriber The subscriber, or NULL.
FERRY_C_API void ferry_subscriber_destroy(ferry_subscriber_t* subscriber);

/// Takes the next sample, waiting up to `timeout_ns` nanoseconds (0: never
/// waits; spins briefly, then sleeps). FERRY_OK with `*sample` NULL:
/// nothing came. FERRY_ERROR_TOO_MANY_HELD: a sample is queued but max_held
/// are still held; FERRY_ERROR_NODE_DECLARED_DEAD: ferryd declared this
/// node dead. Release every sample with ferry_sample_release().
/// @param subscriber The subscriber.
/// @param timeout_ns How long to wait, in nanoseconds (0: never waits).
/// @param sample Receives the sample, or NULL when nothing came.
/// @return FERRY_OK, or the error (see ferry_last_error()).
FERRY_C_API ferry_error_t ferry_take(ferry_subscriber_t* subscriber, uint64_t timeout_ns,
                                     ferry_sample_t** sample);

/// Copies up to `max_count` queued samples of `sample_size` bytes (the
/// topic's sample size) into `out`, fairly from the publishers and in each
/// one's order; waits up to `timeout_ns` for the first one only. `*taken`
/// says how many (0: none came). FERRY_ERROR_NODE_DECLARED_DEAD or
/// FERRY_ERROR_INHERITED_NODE as ferry_take(). Holds no sample, so max_held
/// does not limit it; sample info is not kept (ferry_take() gives it).
/// @param subscriber The subscriber.
/// @param out Where the samples are copied.
/// @param max_count How many samples `out` has room for.
/// @param sample_size Each sample's size: the topic's sample size.
/// @param timeout_ns How long to wait, in nanoseconds (0: never waits).
/// @param taken Receives how many samples were copied.
/// @return FERRY_OK, or the error (see ferry_last_error()).
FERRY_C_API ferry_error_t ferry_take_many(ferry_subscriber_t* subscriber, void* out,
                                          size_t max_count, size_t sample_size, uint64_t timeout_ns,
                                          size_t* taken);

/// Publishers ferryd matched with this subscriber; 0 for NULL.
/// @param subscriber The subscriber.
/// @return The number of publishers.
FERRY_C_API size_t ferry_subscriber_publisher_count(const ferry_subscriber_t* subscriber);

/// How many times ferry_take() with a timeout polls its queues before it
/// sleeps (default 1024); 0 sleeps at once (no CPU while waiting, a
/// wake-up's microseconds per sample).
/// @param subscriber The subscriber.
/// @param polls Polls before sleeping; 0 sleeps at once.
/// @return FERRY_OK, or the error (see ferry_last_error()).
FERRY_C_API ferry_error_t ferry_subscriber_set_take_spin(ferry_subscriber_t* subscriber,
                                                         uint32_t polls);

/// The sample's bytes; NULL for a NULL or released sample.
/// @param sample The sample.
/// @return The bytes, valid until the sample is released.
FERRY_C_API const void* ferry_sample_data(const ferry_sample_t* sample);

/// The sample's size in bytes; 0 for a NULL or released sample.
/// @param sample The sample.
/// @return The size in bytes.
FERRY_C_API size_t ferry_sample_size(const ferry_sample_t* sample);

/// The sample's sequence, publisher and publish time; all zero for a NULL
/// or released sample.
/// @param sample The sample.
/// @return The metadata.
FERRY_C_API ferry_sample_info_t ferry_sample_info(const ferry_sample_t* sample);

/// Gives a sample back (any thread, also after its subscriber was
/// destroyed); the handle is invalid afterwards. NULL: nothing happens. A
/// second release of the same handle is FERRY_ERROR_INVALID_ARGUMENT while
/// the subscriber has not handed that slot out again.
/// @param sample The sample, or NULL.
/// @return FERRY_OK, or the error (see ferry_last_error()).
FERRY_C_API ferry_error_t ferry_sample_release(ferry_sample_t* sample);

/// Creates an empty waitset.
/// @param waitset Receives the waitset (NULL on failure).
/// @return FERRY_OK, or the error (see ferry_last_error()).
FERRY_C_API ferry_error_t ferry_waitset_create(ferry_waitset_t** waitset);

/// Destroys a waitset (its subscribers stay). NULL: nothing happens.
/// @param waitset The waitset, or NULL.
FERRY_C_API void ferry_waitset_destroy(ferry_waitset_t* waitset);

/// Attaches a subscriber; `*index` (may be NULL) is its bit in
/// ferry_waitset_wait()'s mask: the lowest free one, 0, 1, ... in attach
/// order. FERRY_ERROR_REFUSED past FERRY_WAITSET_CAPACITY or for a
/// subscriber attached already (here or elsewhere).
/// @param waitset The waitset.
/// @param subscriber The subscriber.
/// @param index Receives the attachment index (may be NULL).
/// @return FERRY_OK, or the error (see ferry_last_error()).
FERRY_C_API ferry_error_t ferry_waitset_attach(ferry_waitset_t* waitset,
                                               ferry_subscriber_t* subscriber, size_t* index);

/// Detaches a subscriber; FERRY_ERROR_REFUSED if it is not attached here.
/// @param waitset The waitset.
/// @param subscriber The subscriber.
/// @return FERRY_OK, or the error (see ferry_last_error()).
FERRY_C_API ferry_error_t ferry_waitset_detach(ferry_waitset_t* waitset,
                                               ferry_subscriber_t* subscriber);

/// Returns at once with the ready attachments, else sleeps until one is
/// ready, ferry_waitset_notify() is called, or `timeout_ns` passes.
/// `*ready` (may be NULL) gets bit i set for attachment i with a queued
/// sample (0 on a timeout). Level-triggered; allocates nothing.
/// @param waitset The waitset.
/// @param timeout_ns How long to wait, in nanoseconds (0: never waits).
/// @param ready Receives the ready mask (may be NULL).
/// @return FERRY_OK, or the error (see ferry_last_error()).
FERRY_C_API ferry_error_t ferry_waitset_wait(ferry_waitset_t* waitset, uint64_t timeout_ns,
                                             uint64_t* ready);

/// Wakes ferry_waitset_wait() and makes the descriptor readable: any
/// thread, async-signal-safe.
/// @param waitset The waitset.
/// @return FERRY_OK, or the error (see ferry_last_error()).
FERRY_C_API ferry_error_t ferry_waitset_notify(ferry_waitset_t* waitset);

/// A descriptor for poll/epoll (owned by the waitset: do not close it),
/// readable while an attachment was ready at the last wait, something came
/// since, or after notify. After it polls readable, call
/// ferry_waitset_wait() with timeout 0: it reads it clear and re-arms it.
/// -1 on failure (see ferry_last_error()).
/// @param waitset The waitset.
/// @return The descriptor, or -1.
FERRY_C_API int ferry_waitset_fd(ferry_waitset_t* waitset);

/// @name Services (docs/services.md)
/// A client calls the one server of a service; requests and responses are
/// structs of the service's declared types (their names and sizes are
/// checked when the handle is made, as a port's are).
///@{

/// Calls a service (ferry::Client). One thread at a time.
typedef struct ferry_client_s ferry_client_t;
/// The one server of a service (ferry::Server). One thread at a time.
typedef struct ferry_server_s ferry_server_t;

/// A call sent with ferry_send(), owned by the caller (no allocation): take
/// its response with ferry_pending_take(), or give it up with
/// ferry_pending_abandon(). Its fields are ferry's.
typedef struct ferry_pending_t {
  /// ferry's bookkeeping; do not change.
  uint64_t opaque[2];
  /// The call's number (the request's sequence at the server).
  uint64_t sequence;
} ferry_pending_t;

/// A request a server took, owned by the caller until ferry_respond() or
/// ferry_request_drop() (exactly one of them, on the server's thread).
typedef struct ferry_request_t {
  /// The request's bytes (the service's request type), read-only.
  const void* data;
  /// How many bytes.
  size_t size;
  /// sequence: the client's call number; publisher_id: the client.
  ferry_sample_info_t info;
  /// ferry's bookkeeping; do not change.
  uint64_t opaque[3];
} ferry_request_t;

/// Creates a client of `service`: its request and response types must be
/// the service's (names and sizes).
/// @param node The node.
/// @param service The service's name.
/// @param request_type The request type's name.
/// @param request_size Its size.
/// @param response_type The response type's name.
/// @param response_size Its size.
/// @param client Receives the client (NULL on failure).
/// @return FERRY_OK, or FERRY_ERROR_REFUSED naming the mismatch or limit.
FERRY_C_API ferry_error_t ferry_client_create(ferry_node_t* node, const char* service,
                                              const char* request_type, size_t request_size,
                                              const char* response_type, size_t response_size,
                                              ferry_client_t** client);
/// Destroys a client; its pending calls are dropped. NULL: nothing happens.
/// @param client The client, or NULL.
FERRY_C_API void ferry_client_destroy(ferry_client_t* client);
/// Waits up to `timeout_ns` for a server.
/// @param client The client.
/// @param timeout_ns Nanoseconds.
/// @return FERRY_OK once there is one, FERRY_ERROR_NO_SERVER after the timeout.
FERRY_C_API ferry_error_t ferry_client_wait_for_server(ferry_client_t* client, uint64_t timeout_ns);
/// Sends `request` (request_size bytes) and copies the response into
/// `response` (response_size bytes), waiting up to `timeout_ns`.
/// @param client The client.
/// @param request The request.
/// @param response Where the response goes.
/// @param timeout_ns Nanoseconds.
/// @return FERRY_OK, FERRY_ERROR_NO_SERVER, FERRY_ERROR_TIMEOUT,
/// FERRY_ERROR_SERVER_GONE, FERRY_ERROR_TOO_MANY_PENDING or FERRY_ERROR_NO_RESPONSE.
FERRY_C_API ferry_error_t ferry_call(ferry_client_t* client, const void* request, void* response,
                                     uint64_t timeout_ns);
/// Sends `request` without waiting.
/// @param client The client.
/// @param request The request.
/// @param pending Receives the call.
/// @return FERRY_OK, FERRY_ERROR_NO_SERVER or FERRY_ERROR_TOO_MANY_PENDING.
FERRY_C_API ferry_error_t ferry_send(ferry_client_t* client, const void* request,
                                     ferry_pending_t* pending);
/// Copies the call's response into `response`, waiting up to `timeout_ns`.
/// With 0 it never waits: FERRY_ERROR_TIMEOUT then means "not yet" and the
/// call stays pending; with a timeout, every error ends the call.
/// @param client The client that sent it.
/// @param pending The call.
/// @param response Where the response goes.
/// @param timeout_ns Nanoseconds.
/// @return FERRY_OK, or the call's error (as ferry_call()).
FERRY_C_API ferry_error_t ferry_pending_take(ferry_client_t* client, ferry_pending_t* pending,
                                             void* response, uint64_t timeout_ns);
/// Gives a call up: its response is dropped when it comes.
/// @param client The client that sent it.
/// @param pending The call.
FERRY_C_API void ferry_pending_abandon(ferry_client_t* client, ferry_pending_t* pending);

/// Creates the server of `service` (refused when it has one: the sentence
/// names the node that serves). Types as ferry_client_create().
/// @param node The node.
/// @param service The service's name.
/// @param request_type The request type's name.
/// @param request_size Its size.
/// @param response_type The response type's name.
/// @param response_size Its size.
/// @param server Receives the server (NULL on failure).
/// @return FERRY_OK, or FERRY_ERROR_REFUSED.
FERRY_C_API ferry_error_t ferry_server_create(ferry_node_t* node, const char* service,
                                              const char* request_type, size_t request_size,
                                              const char* response_type, size_t response_size,
                                              ferry_server_t** server);
/// Destroys a server. Answer or drop its requests first. NULL: nothing happens.
/// @param server The server, or NULL.
FERRY_C_API void ferry_server_destroy(ferry_server_t* server);
/// Takes the next request, waiting up to `timeout_ns` (0: never waits).
/// @param server The server.
/// @param timeout_ns Nanoseconds.
/// @param request Filled when one came.
/// @param taken Set to 1 when one came, else 0.
/// @return FERRY_OK, or the error (FERRY_ERROR_TOO_MANY_HELD: answer some first).
FERRY_C_API ferry_error_t ferry_take_request(ferry_server_t* server, uint64_t timeout_ns,
                                             ferry_request_t* request, int* taken);
/// Answers a request with `response` (response_size bytes); the request is done.
/// @param server The server that took it.
/// @param request The request.
/// @param response The response.
/// @return FERRY_OK (also when its client is gone: nothing to answer).
FERRY_C_API ferry_error_t ferry_respond(ferry_server_t* server, ferry_request_t* request,
                                        const void* response);
/// Drops a request unanswered: its client gets FERRY_ERROR_NO_RESPONSE.
/// @param server The server that took it.
/// @param request The request.
FERRY_C_API void ferry_request_drop(ferry_server_t* server, ferry_request_t* request);
///@}

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // FERRY_FERRY_H

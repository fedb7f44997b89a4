/* One side of the C API's multi-process tests (test_c_api), in C11:
     c_peer publish|publish-loan|publish-many|publish-loan-many TOPIC N
                                                        sends readings 0..N-1
     c_peer take|take-many|poll TOPIC N                 takes readings 0..N-1 in order
     c_peer waitset TOPIC1 TOPIC2 N                     N from each, through one waitset
     c_peer dead TOPIC READY_FILE                       creates READY_FILE once subscribed,
                                                        then waits to be declared dead
     c_peer hot-loop TOPIC                              publish/loan/take/release between
                                                        two getppid() markers (strace)
   Exit 0 when everything held; else a sentence on stderr and exit 1. */
#define _POSIX_C_SOURCE 200809L
#include <ferry/ferry.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "c_api_types.h"

#define SECOND 1000000000ull

static int failed(const char* what, ferry_error_t e) {
  fprintf(stderr, "c_peer: %s: %s (%s)\n", what, ferry_error_name(e), ferry_last_error());
  return 1;
}

#define CHECK_OK(call)                            \
  do {                                            \
    const ferry_error_t e_ = (call);              \
    if (e_ != FERRY_OK) return failed(#call, e_); \
  } while (0)

#define EXPECT(cond)                                                           \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "c_peer: line %d: %s does not hold\n", __LINE__, #cond); \
      return 1;                                                                \
    }                                                                          \
  } while (0)

static Reading reading(uint64_t i) {
  Reading r;
  memset(&r, 0, sizeof r);
  r.seq = i;
  r.value = (double)i * 0.5;
  snprintf(r.label, sizeof r.label, "c-%llu", (unsigned long long)i);
  r.flags = (uint16_t)(i & 0xffffu);
  r.raw[25] = (uint8_t)(i & 0xffu);
  return r;
}

static int same(const Reading* r, uint64_t i) {
  const Reading want = reading(i);
  return r->seq == want.seq && r->value == want.value && strcmp(r->label, want.label) == 0 &&
         r->flags == want.flags && r->raw[25] == want.raw[25];
}

static ferry_node_t* g_node;

static int make_pub(const char* topic, ferry_publisher_t** pub) {
  CHECK_OK(ferry_publisher_create(g_node, topic, Reading_TYPE_NAME, sizeof(Reading),
                                  _Alignof(Reading), pub));
  EXPECT(ferry_publisher_wait_for_subscribers(*pub, 1, 10 * SECOND) == 1);
  return 0;
}

static int make_sub(const char* topic, ferry_subscriber_t** sub) {
  CHECK_OK(ferry_subscriber_create(g_node, topic, Reading_TYPE_NAME, sizeof(Reading),
                                   _Alignof(Reading), sub));
  return 0;
}

static int publish(const char* topic, uint64_t n, int by_loan) {
  ferry_publisher_t* pub = NULL;
  if (make_pub(topic, &pub) != 0) return 1;
  for (uint64_t i = 0; i < n; ++i) {
    ferry_publish_result_t r;
    if (by_loan) {
      ferry_loan_t* loan = NULL;
      void* data = NULL;
      CHECK_OK(ferry_loan(pub, &loan, &data));
      EXPECT((uintptr_t)data % _Alignof(Reading) == 0);
      *(Reading*)data = reading(i);
      CHECK_OK(ferry_publish_loan(pub, loan, &r));
    } else {
      const Reading value = reading(i);
      CHECK_OK(ferry_publish(pub, &value, sizeof value, &r));
    }
    EXPECT(r.delivered == 1 && r.timed_out == 0);
  }
  ferry_publisher_destroy(pub);
  return 0;
}

static int publish_many(const char* topic, uint64_t n) {
  ferry_publisher_t* pub = NULL;
  if (make_pub(topic, &pub) != 0) return 1;
  Reading batch[16];
  for (uint64_t i = 0; i < n;) {
    size_t count = 0;
    for (; count < 16 && i < n; ++count, ++i) batch[count] = reading(i);
    ferry_publish_result_t r;
    CHECK_OK(ferry_publish_many(pub, batch, count, sizeof(Reading), &r));
    EXPECT(r.delivered == count);
  }
  ferry_publisher_destroy(pub);
  return 0;
}

/* Readings 0..n-1 in loaned batches of up to 16, written in place; the
   last one is loaned whole and shrunk to what is left. */
static int publish_loan_many(const char* topic, uint64_t n) {
  ferry_publisher_t* pub = NULL;
  if (make_pub(topic, &pub) != 0) return 1;
  for (uint64_t i = 0; i < n;) {
    ferry_loan_batch_t* batch = NULL;
    void* data = NULL;
    CHECK_OK(ferry_loan_many(pub, 16, &batch, &data));
    EXPECT(data != NULL && (uintptr_t)data % _Alignof(Reading) == 0);
    Reading* samples = (Reading*)data;
    size_t count = 0;
    for (; count < 16 && i < n; ++count, ++i) samples[count] = reading(i);
    CHECK_OK(ferry_loan_batch_shrink(batch, count));
    ferry_publish_result_t r;
    CHECK_OK(ferry_publish_loan_many(pub, batch, &r));
    EXPECT(r.delivered == count && r.timed_out == 0);
  }
  ferry_publisher_destroy(pub);
  return 0;
}

/* Takes the next reading of `sub` (up to 5 s) and checks it is number i. */
static int take_one(ferry_subscriber_t* sub, uint64_t i) {
  ferry_sample_t* s = NULL;
  CHECK_OK(ferry_take(sub, 5 * SECOND, &s));
  EXPECT(s != NULL);
  EXPECT(ferry_sample_size(s) == sizeof(Reading));
  EXPECT(same((const Reading*)ferry_sample_data(s), i));
  const ferry_sample_info_t info = ferry_sample_info(s);
  static uint64_t first_sequence; /* the publisher's count goes on across runs */
  if (i == 0) first_sequence = info.sequence;
  EXPECT(info.sequence == first_sequence + i);
  EXPECT(info.publisher_id != 0 && info.publish_time_ns != 0);
  CHECK_OK(ferry_sample_release(s));
  return 0;
}

static int take(const char* topic, uint64_t n) {
  ferry_subscriber_t* sub = NULL;
  if (make_sub(topic, &sub) != 0) return 1;
  for (uint64_t i = 0; i < n; ++i) {
    if (take_one(sub, i) != 0) return 1;
  }
  ferry_subscriber_destroy(sub);
  return 0;
}

static int take_many(const char* topic, uint64_t n) {
  ferry_subscriber_t* sub = NULL;
  if (make_sub(topic, &sub) != 0) return 1;
  Reading out[32];
  uint64_t next = 0;
  while (next < n) {
    size_t got = 0;
    CHECK_OK(ferry_take_many(sub, out, 32, sizeof(Reading), 5 * SECOND, &got));
    EXPECT(got > 0);
    for (size_t k = 0; k < got; ++k, ++next) EXPECT(same(&out[k], next));
  }
  ferry_subscriber_destroy(sub);
  return 0;
}

static int waitset(const char* topic1, const char* topic2, uint64_t n) {
  ferry_subscriber_t* subs[2] = {NULL, NULL};
  if (make_sub(topic1, &subs[0]) != 0 || make_sub(topic2, &subs[1]) != 0) return 1;
  ferry_waitset_t* ws = NULL;
  CHECK_OK(ferry_waitset_create(&ws));
  size_t index[2] = {9, 9};
  CHECK_OK(ferry_waitset_attach(ws, subs[0], &index[0]));
  CHECK_OK(ferry_waitset_attach(ws, subs[1], &index[1]));
  EXPECT(index[0] == 0 && index[1] == 1);
  uint64_t next[2] = {0, 0};
  while (next[0] < n || next[1] < n) {
    uint64_t ready = 0;
    CHECK_OK(ferry_waitset_wait(ws, 5 * SECOND, &ready));
    EXPECT(ready != 0); /* else 5 s passed with nothing */
    for (int k = 0; k < 2; ++k) {
      if ((ready >> index[k] & 1u) == 0) continue;
      ferry_sample_t* s = NULL;
      while (ferry_take(subs[k], 0, &s) == FERRY_OK && s != NULL) {
        EXPECT(same((const Reading*)ferry_sample_data(s), next[k]));
        ++next[k];
        CHECK_OK(ferry_sample_release(s));
      }
    }
  }
  CHECK_OK(ferry_waitset_detach(ws, subs[1]));
  ferry_waitset_destroy(ws);
  ferry_subscriber_destroy(subs[0]);
  ferry_subscriber_destroy(subs[1]);
  return 0;
}

static int poll_fd(const char* topic, uint64_t n) {
  ferry_subscriber_t* sub = NULL;
  if (make_sub(topic, &sub) != 0) return 1;
  ferry_waitset_t* ws = NULL;
  CHECK_OK(ferry_waitset_create(&ws));
  CHECK_OK(ferry_waitset_attach(ws, sub, NULL));
  const int fd = ferry_waitset_fd(ws);
  EXPECT(fd >= 0);
  uint64_t next = 0;
  while (next < n) {
    struct pollfd p = {fd, POLLIN, 0};
    EXPECT(poll(&p, 1, 5000) == 1); /* else 5 s passed with nothing */
    uint64_t ready = 0;
    CHECK_OK(ferry_waitset_wait(ws, 0, &ready)); /* reads the descriptor clear */
    ferry_sample_t* s = NULL;
    while (ferry_take(sub, 0, &s) == FERRY_OK && s != NULL) {
      EXPECT(same((const Reading*)ferry_sample_data(s), next));
      ++next;
      CHECK_OK(ferry_sample_release(s));
    }
  }
  ferry_waitset_destroy(ws);
  ferry_subscriber_destroy(sub);
  return 0;
}

/* The test stops us past the liveness timeout once READY_FILE exists (our
   subscriber is made: stopped inside its creation, it would join again): a
   take then says why. */
static int dead(const char* topic, const char* ready_file) {
  ferry_subscriber_t* sub = NULL;
  if (make_sub(topic, &sub) != 0) return 1;
  FILE* ready = fopen(ready_file, "w");
  EXPECT(ready != NULL);
  fclose(ready);
  for (int i = 0; i < 300; ++i) {
    ferry_sample_t* s = NULL;
    const ferry_error_t e = ferry_take(sub, SECOND / 10, &s);
    if (e == FERRY_ERROR_NODE_DECLARED_DEAD) {
      EXPECT(s == NULL);
      EXPECT(strstr(ferry_last_error(), "declared this node dead") != NULL);
      EXPECT(strstr(ferry_last_error(), topic) != NULL);
      ferry_subscriber_destroy(sub);
      return 0;
    }
    EXPECT(e == FERRY_OK && s == NULL);
  }
  fprintf(stderr, "c_peer: never declared dead\n");
  return 1;
}

/* Publish (copy and loan), take, release, batches: no system call between
   the two getppid() markers, which strace shows. */
static int hot_loop(const char* topic) {
  ferry_subscriber_t* sub = NULL;
  ferry_publisher_t* pub = NULL;
  if (make_sub(topic, &sub) != 0 || make_pub(topic, &pub) != 0) return 1;
  Reading batch[8];
  for (uint64_t i = 0; i < 8; ++i) batch[i] = reading(i);
  Reading out[8];
  size_t got = 0;
  ferry_sample_t* s = NULL;
  /* Warm up every path once: each picks up the matched queue. */
  const Reading first = reading(0);
  CHECK_OK(ferry_publish(pub, &first, sizeof first, NULL));
  CHECK_OK(ferry_take(sub, SECOND, &s));
  EXPECT(s != NULL);
  CHECK_OK(ferry_sample_release(s));
  CHECK_OK(ferry_publish_many(pub, batch, 8, sizeof(Reading), NULL));
  CHECK_OK(ferry_take_many(sub, out, 8, sizeof(Reading), SECOND, &got));

  int bad = 0;
  (void)getppid(); /* marker: the loop starts */
  for (uint64_t i = 0; i < 20000; ++i) {
    ferry_publish_result_t r;
    const Reading value = reading(i);
    if (i % 2 == 0) {
      if (ferry_publish(pub, &value, sizeof value, &r) != FERRY_OK) ++bad;
    } else {
      ferry_loan_t* loan = NULL;
      void* data = NULL;
      if (ferry_loan(pub, &loan, &data) != FERRY_OK) {
        ++bad;
        continue;
      }
      *(Reading*)data = value;
      if (ferry_publish_loan(pub, loan, &r) != FERRY_OK) ++bad;
    }
    if (ferry_take(sub, 0, &s) != FERRY_OK || s == NULL ||
        !same((const Reading*)ferry_sample_data(s), i))
      ++bad;
    if (ferry_sample_release(s) != FERRY_OK) ++bad;
    if (i % 64 == 0) {
      if (ferry_publish_many(pub, batch, 8, sizeof(Reading), &r) != FERRY_OK || r.delivered != 8)
        ++bad;
      if (ferry_take_many(sub, out, 8, sizeof(Reading), 0, &got) != FERRY_OK || got != 8) ++bad;
    }
  }
  (void)getppid(); /* marker: the loop ended */
  EXPECT(bad == 0);
  ferry_publisher_destroy(pub);
  ferry_subscriber_destroy(sub);
  return 0;
}

static int run(int argc, char** argv) {
  const char* mode = argv[1];
  const char* topic = argv[2];
  const uint64_t n = argc > 3 ? strtoull(argv[argc - 1], NULL, 10) : 0;
  if (strcmp(mode, "publish") == 0) return publish(topic, n, 0);
  if (strcmp(mode, "publish-loan") == 0) return publish(topic, n, 1);
  if (strcmp(mode, "publish-many") == 0) return publish_many(topic, n);
  if (strcmp(mode, "publish-loan-many") == 0) return publish_loan_many(topic, n);
  if (strcmp(mode, "take") == 0) return take(topic, n);
  if (strcmp(mode, "take-many") == 0) return take_many(topic, n);
  if (strcmp(mode, "poll") == 0) return poll_fd(topic, n);
  if (strcmp(mode, "waitset") == 0 && argc == 5) return waitset(topic, argv[3], n);
  if (strcmp(mode, "dead") == 0 && argc == 4) return dead(topic, argv[3]);
  if (strcmp(mode, "hot-loop") == 0) return hot_loop(topic);
  fprintf(stderr, "c_peer: unknown mode '%s'\n", mode);
  return 2;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: c_peer MODE TOPIC [TOPIC2] [N]\n");
    return 2;
  }
  const ferry_error_t e = ferry_node_create("c_peer", NULL, &g_node);
  if (e != FERRY_OK) return failed("ferry_node_create", e);
  const int status = run(argc, argv);
  ferry_node_destroy(g_node);
  return status;
}

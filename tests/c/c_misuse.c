/* Every misuse of the C API is an error value and a sentence, never a crash
   (test_c_api runs this against a real ferryd): NULL handles and pointers,
   wrong sizes, alignments and type names, limits, double release, double
   publish, a loan on the wrong publisher, waitset mistakes.
   Usage: c_misuse   (FERRY_DOMAIN names a served domain with c_api.yaml) */
#define _POSIX_C_SOURCE 200809L
#include <ferry/ferry.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "c_api_types.h"

static int g_failures = 0;

/* `call` returns `want` and leaves a sentence containing `words`. */
#define EXPECT_ERROR(call, want, words)                                                            \
  do {                                                                                             \
    const ferry_error_t got_ = (call);                                                             \
    if (got_ != (want) || strstr(ferry_last_error(), (words)) == NULL) {                           \
      fprintf(stderr, "c_misuse: line %d: %s gave %s (\"%s\"), wanted %s with \"%s\"\n", __LINE__, \
              #call, ferry_error_name(got_), ferry_last_error(), ferry_error_name(want), (words)); \
      ++g_failures;                                                                                \
    }                                                                                              \
  } while (0)

#define EXPECT(cond)                                                             \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "c_misuse: line %d: %s does not hold\n", __LINE__, #cond); \
      ++g_failures;                                                              \
    }                                                                            \
  } while (0)

#define INVALID FERRY_ERROR_INVALID_ARGUMENT
#define SIZE sizeof(Reading)
#define ALIGN _Alignof(Reading)

/* Up to 5 s for the publisher to attach its subscriber's queue. */
static void wait_matched(ferry_publisher_t* pub) {
  EXPECT(ferry_publisher_wait_for_subscribers(pub, 1, 5000000000ULL) == 1);
}

static void nodes(void) {
  ferry_node_t* node = (ferry_node_t*)&g_failures; /* must be overwritten */
  EXPECT_ERROR(ferry_node_create(NULL, NULL, &node), INVALID, "name is NULL");
  EXPECT(node == NULL);
  EXPECT_ERROR(ferry_node_create("n", NULL, NULL), INVALID, "out-pointer is NULL");
  EXPECT_ERROR(ferry_node_create("n", "c-api-nobody", &node), FERRY_ERROR_REFUSED, "ferryd");
  EXPECT(node == NULL);
  EXPECT_ERROR(ferry_node_create("n", "bad domain!", &node), FERRY_ERROR_REFUSED, "domain");
  ferry_node_destroy(NULL);
}

static void ports(ferry_node_t* node) {
  ferry_publisher_t* pub = NULL;
  ferry_subscriber_t* sub = NULL;
  EXPECT_ERROR(ferry_publisher_create(NULL, "c/misuse", Reading_TYPE_NAME, SIZE, ALIGN, &pub),
               INVALID, "node is NULL");
  EXPECT_ERROR(ferry_publisher_create(node, NULL, Reading_TYPE_NAME, SIZE, ALIGN, &pub), INVALID,
               "topic is NULL");
  EXPECT_ERROR(ferry_publisher_create(node, "c/misuse", NULL, SIZE, ALIGN, &pub), INVALID,
               "type_name is NULL");
  EXPECT_ERROR(ferry_publisher_create(node, "c/misuse", Reading_TYPE_NAME, SIZE, ALIGN, NULL),
               INVALID, "out-pointer");
  EXPECT_ERROR(ferry_publisher_create(node, "c/misuse", "Other", SIZE, ALIGN, &pub),
               FERRY_ERROR_REFUSED, "Other");
  EXPECT(pub == NULL);
  EXPECT_ERROR(ferry_publisher_create(node, "c/misuse", Reading_TYPE_NAME, SIZE + 8, ALIGN, &pub),
               FERRY_ERROR_REFUSED, "c/misuse");
  EXPECT_ERROR(ferry_publisher_create(node, "c/misuse", Reading_TYPE_NAME, SIZE, 4, &pub),
               FERRY_ERROR_REFUSED, "align");
  EXPECT_ERROR(ferry_subscriber_create(node, "c/misuse", Reading_TYPE_NAME, 1, 1, &sub),
               FERRY_ERROR_REFUSED, "c/misuse");
  EXPECT_ERROR(ferry_subscriber_create(NULL, "c/misuse", Reading_TYPE_NAME, SIZE, ALIGN, &sub),
               INVALID, "node is NULL");
  EXPECT(sub == NULL);
  EXPECT(ferry_publisher_subscriber_count(NULL) == 0);
  EXPECT(strstr(ferry_last_error(), "publisher is NULL") != NULL);
  EXPECT(ferry_publisher_wait_for_subscribers(NULL, 1, 0) == 0);
  EXPECT(strstr(ferry_last_error(), "publisher is NULL") != NULL);
  EXPECT(ferry_subscriber_publisher_count(NULL) == 0);
  EXPECT(ferry_publisher_id(NULL) == 0);
  EXPECT_ERROR(ferry_subscriber_set_take_spin(NULL, 0), INVALID, "subscriber is NULL");
  ferry_publisher_destroy(NULL);
  ferry_subscriber_destroy(NULL);
}

static void publishing(ferry_publisher_t* pub, ferry_publisher_t* other) {
  Reading r;
  memset(&r, 0, sizeof r);
  ferry_publish_result_t result;
  memset(&result, 0xff, sizeof result);
  EXPECT_ERROR(ferry_publish(NULL, &r, SIZE, &result), INVALID, "publisher is NULL");
  EXPECT_ERROR(ferry_publish(pub, NULL, SIZE, &result), INVALID, "data is NULL");
  EXPECT_ERROR(ferry_publish(pub, &r, SIZE - 1, &result), INVALID, "takes samples of");
  EXPECT(result.delivered == 0 && result.dropped == 0);
  EXPECT_ERROR(ferry_publish(pub, &r, 0, NULL), INVALID, "0 bytes given");
  Reading batch[3];
  memset(batch, 0, sizeof batch);
  EXPECT_ERROR(ferry_publish_many(pub, batch, 3, SIZE + 1, &result), INVALID, "takes samples of");
  EXPECT_ERROR(ferry_publish_many(pub, NULL, 3, SIZE, &result), INVALID, "samples is NULL");
  EXPECT_ERROR(ferry_publish_many(NULL, batch, 3, SIZE, &result), INVALID, "publisher is NULL");
  EXPECT(ferry_publish_many(pub, NULL, 0, SIZE, &result) == FERRY_OK && result.delivered == 0);

  ferry_loan_t* loan = NULL;
  void* data = NULL;
  EXPECT_ERROR(ferry_loan(NULL, &loan, &data), INVALID, "publisher is NULL");
  EXPECT_ERROR(ferry_loan(pub, NULL, &data), INVALID, "loan out-pointer");
  EXPECT_ERROR(ferry_loan(pub, &loan, NULL), INVALID, "data out-pointer");
  EXPECT_ERROR(ferry_publish_loan(pub, NULL, &result), INVALID, "loan is NULL");
  EXPECT_ERROR(ferry_loan_return(NULL, NULL), INVALID, "publisher is NULL");

  /* max_loans is 8: the ninth is refused; returned ones can be loaned again. */
  ferry_loan_t* loans[8];
  for (int i = 0; i < 8; ++i) EXPECT(ferry_loan(pub, &loans[i], &data) == FERRY_OK);
  EXPECT_ERROR(ferry_loan(pub, &loan, &data), FERRY_ERROR_TOO_MANY_LOANS, "max_loans");
  EXPECT(loan == NULL && data == NULL);
  EXPECT_ERROR(ferry_publish_loan(other, loans[0], &result), INVALID, "another publisher");
  EXPECT_ERROR(ferry_loan_return(other, loans[0]), INVALID, "another publisher");
  EXPECT(ferry_publish_loan(pub, loans[0], &result) == FERRY_OK);
  EXPECT_ERROR(ferry_publish_loan(pub, loans[0], &result), INVALID, "published or returned");
  EXPECT_ERROR(ferry_loan_return(pub, loans[0]), INVALID, "published or returned");
  for (int i = 1; i < 8; ++i) EXPECT(ferry_loan_return(pub, loans[i]) == FERRY_OK);
  EXPECT_ERROR(ferry_loan_return(pub, loans[1]), INVALID, "published or returned");

  /* Batches of loans: one at a time, at most the topic's capacity (64). */
  ferry_loan_batch_t* lb = NULL;
  ferry_loan_batch_t* second = NULL;
  EXPECT_ERROR(ferry_loan_many(NULL, 4, &lb, &data), INVALID, "publisher is NULL");
  EXPECT_ERROR(ferry_loan_many(pub, 4, NULL, &data), INVALID, "batch out-pointer");
  EXPECT_ERROR(ferry_loan_many(pub, 4, &lb, NULL), INVALID, "data out-pointer");
  EXPECT_ERROR(ferry_loan_many(pub, 65, &lb, &data), INVALID, "holds at most 64");
  EXPECT(lb == NULL && data == NULL);
  EXPECT(ferry_loan_many(pub, 4, &lb, &data) == FERRY_OK && lb != NULL && data != NULL);
  EXPECT(ferry_loan_batch_size(lb) == 4);
  EXPECT(ferry_loan_batch_sample(lb, 3) == (char*)data + 3 * SIZE);
  EXPECT(ferry_loan_batch_sample(lb, 4) == NULL);
  EXPECT_ERROR(ferry_loan_many(pub, 1, &second, &data), FERRY_ERROR_TOO_MANY_LOANS, "out already");
  EXPECT(second == NULL && data == NULL);
  EXPECT_ERROR(ferry_publish_loan_many(other, lb, &result), INVALID, "another publisher");
  EXPECT_ERROR(ferry_loan_batch_return(other, lb), INVALID, "another publisher");
  EXPECT_ERROR(ferry_publish_loan_many(pub, NULL, &result), INVALID, "batch is NULL");
  EXPECT(ferry_loan_batch_shrink(lb, 9) == FERRY_OK && ferry_loan_batch_size(lb) == 4);
  EXPECT(ferry_loan_batch_shrink(lb, 2) == FERRY_OK && ferry_loan_batch_size(lb) == 2);
  memset(ferry_loan_batch_sample(lb, 0), 0, 2 * SIZE);
  EXPECT(ferry_publish_loan_many(pub, lb, &result) == FERRY_OK);
  EXPECT_ERROR(ferry_publish_loan_many(pub, lb, &result), INVALID, "published or returned");
  EXPECT_ERROR(ferry_loan_batch_return(pub, lb), INVALID, "published or returned");
  EXPECT_ERROR(ferry_loan_batch_shrink(lb, 1), INVALID, "not out");
  EXPECT_ERROR(ferry_loan_batch_shrink(NULL, 1), INVALID, "batch is NULL");
  EXPECT(ferry_loan_batch_size(lb) == 0 && ferry_loan_batch_sample(lb, 0) == NULL);
  EXPECT(ferry_loan_batch_size(NULL) == 0 && ferry_loan_batch_sample(NULL, 0) == NULL);
  EXPECT(ferry_loan_many(pub, 3, &lb, &data) == FERRY_OK);
  EXPECT(ferry_loan_batch_return(pub, lb) == FERRY_OK);
  EXPECT(ferry_loan_many(pub, 0, &lb, &data) == FERRY_OK && ferry_loan_batch_size(lb) == 0);
  EXPECT(ferry_publish_loan_many(pub, lb, &result) == FERRY_OK && result.delivered == 0);

  /* Two loans and a batch left unpublished: destroying the publisher returns them. */
  for (int i = 0; i < 2; ++i) EXPECT(ferry_loan(pub, &loans[i], &data) == FERRY_OK);
  EXPECT(ferry_loan_many(pub, 5, &lb, &data) == FERRY_OK);
}

static void taking(ferry_publisher_t* pub, ferry_subscriber_t* sub) {
  ferry_sample_t* s = (ferry_sample_t*)&g_failures;
  EXPECT_ERROR(ferry_take(NULL, 0, &s), INVALID, "subscriber is NULL");
  EXPECT(s == NULL);
  EXPECT_ERROR(ferry_take(sub, 0, NULL), INVALID, "out-pointer");
  Reading out[4];
  size_t got = 7;
  EXPECT_ERROR(ferry_take_many(sub, out, 4, SIZE - 1, 0, &got), INVALID, "samples of");
  EXPECT(got == 0);
  EXPECT_ERROR(ferry_take_many(sub, NULL, 4, SIZE, 0, &got), INVALID, "out is NULL");
  EXPECT_ERROR(ferry_take_many(sub, out, 4, SIZE, 0, NULL), INVALID, "taken out-pointer");
  EXPECT(ferry_sample_data(NULL) == NULL && ferry_sample_size(NULL) == 0);
  EXPECT(ferry_sample_info(NULL).publisher_id == 0);
  EXPECT(ferry_sample_release(NULL) == FERRY_OK);

  /* max_held is 4: a fifth take is refused while four are held. */
  Reading r;
  memset(&r, 0, sizeof r);
  for (int i = 0; i < 6; ++i) EXPECT(ferry_publish(pub, &r, SIZE, NULL) == FERRY_OK);
  ferry_sample_t* held[4];
  for (int i = 0; i < 4; ++i) EXPECT(ferry_take(sub, 1000000000u, &held[i]) == FERRY_OK && held[i]);
  EXPECT_ERROR(ferry_take(sub, 0, &s), FERRY_ERROR_TOO_MANY_HELD, "max_held");
  EXPECT(s == NULL);
  EXPECT(ferry_sample_release(held[0]) == FERRY_OK);
  EXPECT_ERROR(ferry_sample_release(held[0]), INVALID, "released already");
  EXPECT(ferry_sample_data(held[0]) == NULL && ferry_sample_size(held[0]) == 0);
  EXPECT(ferry_take(sub, 0, &s) == FERRY_OK && s != NULL);
  EXPECT(ferry_sample_release(s) == FERRY_OK);
  for (int i = 1; i < 4; ++i) EXPECT(ferry_sample_release(held[i]) == FERRY_OK);
}

static void waitsets(ferry_subscriber_t* sub, ferry_subscriber_t* other) {
  ferry_waitset_t* ws = NULL;
  EXPECT_ERROR(ferry_waitset_create(NULL), INVALID, "out-pointer");
  EXPECT(ferry_waitset_create(&ws) == FERRY_OK);
  EXPECT_ERROR(ferry_waitset_attach(NULL, sub, NULL), INVALID, "waitset is NULL");
  EXPECT_ERROR(ferry_waitset_attach(ws, NULL, NULL), INVALID, "subscriber is NULL");
  EXPECT(ferry_waitset_attach(ws, sub, NULL) == FERRY_OK);
  EXPECT_ERROR(ferry_waitset_attach(ws, sub, NULL), FERRY_ERROR_REFUSED, "attached");
  EXPECT_ERROR(ferry_waitset_detach(ws, other), FERRY_ERROR_REFUSED, "not attached");
  EXPECT_ERROR(ferry_waitset_detach(NULL, sub), INVALID, "waitset is NULL");
  uint64_t ready = 7;
  EXPECT_ERROR(ferry_waitset_wait(NULL, 0, &ready), INVALID, "waitset is NULL");
  EXPECT(ready == 0);
  EXPECT_ERROR(ferry_waitset_notify(NULL), INVALID, "waitset is NULL");
  EXPECT(ferry_waitset_fd(NULL) == -1);
  /* Six were published and five taken: `sub` (index 0) has one queued. */
  EXPECT(ferry_waitset_wait(ws, 1000000000u, &ready) == FERRY_OK && ready == 1);
  ferry_sample_t* s = NULL;
  EXPECT(ferry_take(sub, 0, &s) == FERRY_OK && s != NULL);
  EXPECT(ferry_sample_release(s) == FERRY_OK);
  /* notify() wakes a wait (spurious readiness is allowed, so only its return is checked). */
  EXPECT(ferry_waitset_notify(ws) == FERRY_OK);
  EXPECT(ferry_waitset_wait(ws, 1000000000u, &ready) == FERRY_OK);
  ferry_waitset_destroy(ws);
  ferry_waitset_destroy(NULL);
}

/* A sample outlives its subscriber: readable, then released. */
static void outliving(ferry_node_t* node, ferry_publisher_t* pub) {
  ferry_subscriber_t* sub = NULL;
  EXPECT(ferry_subscriber_create(node, "c/other", Reading_TYPE_NAME, SIZE, ALIGN, &sub) ==
         FERRY_OK);
  wait_matched(pub);
  Reading r;
  memset(&r, 0, sizeof r);
  r.seq = 77;
  EXPECT(ferry_publish(pub, &r, SIZE, NULL) == FERRY_OK);
  ferry_sample_t* s = NULL;
  EXPECT(ferry_take(sub, 1000000000u, &s) == FERRY_OK && s != NULL);
  ferry_subscriber_destroy(sub);
  if (s != NULL) {
    EXPECT(((const Reading*)ferry_sample_data(s))->seq == 77);
    EXPECT(ferry_sample_release(s) == FERRY_OK);
  }
}

/* A bytes topic: any size up to max_size (100) by copy; no loans or batches. */
static void bytes_topic(ferry_node_t* node) {
  ferry_publisher_t* pub = NULL;
  ferry_subscriber_t* sub = NULL;
  EXPECT(ferry_subscriber_create(node, "c/bytes", FERRY_BYTES_TYPE, 0, 1, &sub) == FERRY_OK);
  EXPECT(ferry_publisher_create(node, "c/bytes", FERRY_BYTES_TYPE, 0, 1, &pub) == FERRY_OK);
  if (pub == NULL || sub == NULL) return;
  wait_matched(pub);
  const char text[] = "hello from C";
  ferry_publish_result_t r;
  EXPECT(ferry_publish(pub, text, sizeof text, &r) == FERRY_OK && r.delivered == 1);
  EXPECT(ferry_publish(pub, NULL, 0, &r) == FERRY_OK && r.delivered == 1);
  char big[101];
  memset(big, 'x', sizeof big);
  EXPECT_ERROR(ferry_publish(pub, big, sizeof big, &r), FERRY_ERROR_TOO_LARGE, "max_size of 100");
  ferry_loan_t* loan = NULL;
  void* data = NULL;
  EXPECT_ERROR(ferry_loan(pub, &loan, &data), INVALID, "bytes topic");
  ferry_loan_batch_t* lb = NULL;
  EXPECT_ERROR(ferry_loan_many(pub, 1, &lb, &data), INVALID, "bytes topic");
  EXPECT_ERROR(ferry_publish_many(pub, big, 1, 10, &r), INVALID, "bytes topic");
  size_t got = 0;
  EXPECT_ERROR(ferry_take_many(sub, big, 1, 10, 0, &got), INVALID, "bytes topic");
  ferry_sample_t* s = NULL;
  EXPECT(ferry_take(sub, 1000000000u, &s) == FERRY_OK && s != NULL);
  if (s != NULL) {
    EXPECT(ferry_sample_size(s) == sizeof text);
    EXPECT(memcmp(ferry_sample_data(s), text, sizeof text) == 0);
    EXPECT(ferry_sample_release(s) == FERRY_OK);
  }
  EXPECT(ferry_take(sub, 1000000000u, &s) == FERRY_OK && s != NULL);
  if (s != NULL) {
    EXPECT(ferry_sample_size(s) == 0);
    EXPECT(ferry_sample_release(s) == FERRY_OK);
  }
  ferry_publisher_destroy(pub);
  ferry_subscriber_destroy(sub);
}

static void names(void) {
  EXPECT(strcmp(ferry_error_name(FERRY_OK), "OK") == 0);
  EXPECT(strcmp(ferry_error_name(FERRY_ERROR_POOL_EXHAUSTED), "POOL_EXHAUSTED") == 0);
  EXPECT(strcmp(ferry_error_name(FERRY_ERROR_INVALID_ARGUMENT), "INVALID_ARGUMENT") == 0);
  EXPECT(strcmp(ferry_error_name((ferry_error_t)55), "UNKNOWN") == 0);
}

int main(void) {
  names();
  nodes();
  ferry_node_t* node = NULL;
  if (ferry_node_create("c_misuse", NULL, &node) != FERRY_OK) {
    fprintf(stderr, "c_misuse: no node: %s\n", ferry_last_error());
    return 1;
  }
  ports(node);
  ferry_publisher_t* pub = NULL;
  ferry_publisher_t* other = NULL;
  ferry_subscriber_t* sub = NULL;
  ferry_subscriber_t* idle = NULL;
  if (ferry_subscriber_create(node, "c/misuse", Reading_TYPE_NAME, SIZE, ALIGN, &sub) != FERRY_OK ||
      ferry_subscriber_create(node, "c/other", Reading_TYPE_NAME, SIZE, ALIGN, &idle) != FERRY_OK ||
      ferry_publisher_create(node, "c/misuse", Reading_TYPE_NAME, SIZE, ALIGN, &pub) != FERRY_OK ||
      ferry_publisher_create(node, "c/other", Reading_TYPE_NAME, SIZE, ALIGN, &other) != FERRY_OK) {
    fprintf(stderr, "c_misuse: no ports: %s\n", ferry_last_error());
    return 1;
  }
  wait_matched(pub);
  publishing(pub, other);
  taking(pub, sub);
  waitsets(sub, idle);
  ferry_subscriber_destroy(idle);
  outliving(node, other);
  bytes_topic(node);
  ferry_publisher_destroy(pub); /* with two loans out: they go back to the pool */
  ferry_publisher_destroy(other);
  ferry_subscriber_destroy(sub);
  ferry_node_destroy(node);
  if (g_failures != 0) fprintf(stderr, "c_misuse: %d check(s) failed\n", g_failures);
  return g_failures == 0 ? 0 : 1;
}

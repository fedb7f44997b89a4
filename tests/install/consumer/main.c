/* The C API from an installed ferry (ferry::ferry_c): publishes one Ping to
   itself through the domain's ferryd (FERRY_DOMAIN) and prints what it took;
   exit code 0 when it came back intact. Built with -std=c11 -Wall -Wextra
   -Werror. */
#define _POSIX_C_SOURCE 200809L
#include <ferry/ferry.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

typedef struct {
  uint64_t n;
  double value;
} Ping;

static int fail(const char* what, ferry_error_t e) {
  fprintf(stderr, "c_consumer: %s: %s (%s)\n", what, ferry_error_name(e), ferry_last_error());
  return 2;
}

int main(void) {
  ferry_node_t* node = NULL;
  ferry_error_t e = ferry_node_create("c_consumer", NULL, &node);
  if (e != FERRY_OK) return fail("node", e);
  ferry_publisher_t* pub = NULL;
  ferry_subscriber_t* sub = NULL;
  e = ferry_publisher_create(node, "ping", "Ping", sizeof(Ping), _Alignof(Ping), &pub);
  if (e != FERRY_OK) return fail("publisher", e);
  e = ferry_subscriber_create(node, "ping", "Ping", sizeof(Ping), _Alignof(Ping), &sub);
  if (e != FERRY_OK) return fail("subscriber", e);
  for (int i = 0; ferry_publisher_subscriber_count(pub) != 1; ++i) {
    if (i == 10000) return 3;
    const struct timespec ms = {0, 1000000L};
    nanosleep(&ms, NULL);
  }
  const Ping ping = {42, 2.5};
  ferry_publish_result_t r;
  e = ferry_publish(pub, &ping, sizeof ping, &r);
  if (e != FERRY_OK || r.delivered != 1) return fail("publish", e);
  ferry_sample_t* s = NULL;
  e = ferry_take(sub, 10000000000u, &s);
  if (e != FERRY_OK || s == NULL) return fail("take", e);
  const Ping* got = (const Ping*)ferry_sample_data(s);
  printf("c consumer took %llu %.2f\n", (unsigned long long)got->n, got->value);
  const int ok = got->n == 42 && got->value == 2.5;
  ferry_sample_release(s);
  ferry_subscriber_destroy(sub);
  ferry_publisher_destroy(pub);
  ferry_node_destroy(node);
  return ok ? 0 : 1;
}

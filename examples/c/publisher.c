/* Publishes poses on robot/pose from C: waits for a subscriber, then sends
   `count` samples at `rate_hz`, every other one written in place into a loan.
   Usage: c_publisher [count] [rate_hz]   (the hello example's topic and type) */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <ferry/ferry.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hello_types.h" /* Pose: `ferry gen c hello.yaml` at build time */

static int fail(const char* what, ferry_error_t e) {
  fprintf(stderr, "c_publisher: %s failed (%s): %s\n", what, ferry_error_name(e),
          ferry_last_error());
  return 1;
}

/* A whole number in [lo, hi] from argv, or exit 2 with one line. */
static long parse(const char* text, const char* what, long lo, long hi) {
  char* end = NULL;
  errno = 0;
  const long v = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi) {
    fprintf(stderr,
            "c_publisher: %s must be a whole number from %ld to %ld, not '%s' (usage: "
            "c_publisher [count] [rate_hz])\n",
            what, lo, hi, text);
    exit(2);
  }
  return v;
}

static void sleep_ns(long ns) {
  struct timespec t = {ns / 1000000000L, ns % 1000000000L};
  nanosleep(&t, NULL);
}

static void fill(Pose* pose, int i) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  memset(pose, 0, sizeof *pose);
  pose->stamp_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
  pose->x = cos(i * 0.1);
  pose->y = sin(i * 0.1);
  strncpy(pose->frame, "map", sizeof pose->frame);
}

int main(int argc, char** argv) {
  if (argc > 3) {
    fprintf(stderr, "usage: c_publisher [count] [rate_hz]\n");
    return 2;
  }
  const long count = argc > 1 ? parse(argv[1], "count", 0, 1000000) : 20;
  const long rate_hz = argc > 2 ? parse(argv[2], "rate_hz", 1, 1000000) : 10;

  ferry_node_t* node = NULL;
  ferry_error_t e = ferry_node_create("c_publisher", NULL, &node);
  if (e != FERRY_OK) return fail("joining the domain", e);
  ferry_publisher_t* pub = NULL;
  e = ferry_publisher_create(node, "robot/pose", Pose_TYPE_NAME, sizeof(Pose), _Alignof(Pose),
                             &pub);
  if (e != FERRY_OK) {
    ferry_node_destroy(node);
    return fail("creating the publisher", e);
  }

  /* up to 10 s for a subscriber */
  const size_t matched = ferry_publisher_wait_for_subscribers(pub, 1, 10000000000ULL);
  printf("publisher: %zu subscriber(s) matched\n", matched);

  int status = 0;
  for (long i = 0; i < count && status == 0; ++i) {
    ferry_publish_result_t r;
    if (i % 2 == 0) { /* by copy */
      Pose pose;
      fill(&pose, (int)i);
      e = ferry_publish(pub, &pose, sizeof pose, &r);
    } else { /* by loan: written in place in shared memory, sent without a copy */
      ferry_loan_t* loan = NULL;
      void* data = NULL;
      e = ferry_loan(pub, &loan, &data);
      if (e == FERRY_OK) {
        fill((Pose*)data, (int)i);
        e = ferry_publish_loan(pub, loan, &r);
      }
    }
    if (e != FERRY_OK) {
      status = fail("publishing", e);
      break;
    }
    printf("publisher: sample %ld delivered to %u queue(s)\n", i, r.delivered);
    fflush(stdout);
    sleep_ns(1000000000L / rate_hz);
  }
  ferry_publisher_destroy(pub);
  ferry_node_destroy(node);
  return status;
}

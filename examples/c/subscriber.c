/* Prints poses taken from robot/pose in C until `count` arrived or none came
   for two seconds. Usage: c_subscriber [count]   (the hello example's topic) */
#include <errno.h>
#include <ferry/ferry.h>
#include <stdio.h>
#include <stdlib.h>

#include "hello_types.h" /* Pose: `ferry gen c hello.yaml` at build time */

static int fail(const char* what, ferry_error_t e) {
  fprintf(stderr, "c_subscriber: %s failed (%s): %s\n", what, ferry_error_name(e),
          ferry_last_error());
  return 1;
}

int main(int argc, char** argv) {
  long count = 20;
  if (argc > 2) {
    fprintf(stderr, "usage: c_subscriber [count]\n");
    return 2;
  }
  if (argc == 2) {
    char* end = NULL;
    errno = 0;
    count = strtol(argv[1], &end, 10);
    if (errno != 0 || end == argv[1] || *end != '\0' || count < 0 || count > 1000000) {
      fprintf(stderr,
              "c_subscriber: count must be a whole number from 0 to 1000000, not '%s' (usage: "
              "c_subscriber [count])\n",
              argv[1]);
      return 2;
    }
  }

  ferry_node_t* node = NULL;
  ferry_error_t e = ferry_node_create("c_subscriber", NULL, &node);
  if (e != FERRY_OK) return fail("joining the domain", e);
  ferry_subscriber_t* sub = NULL;
  e = ferry_subscriber_create(node, "robot/pose", Pose_TYPE_NAME, sizeof(Pose), _Alignof(Pose),
                              &sub);
  if (e != FERRY_OK) {
    ferry_node_destroy(node);
    return fail("creating the subscriber", e);
  }

  long received = 0;
  int status = 0;
  while (received < count) {
    ferry_sample_t* s = NULL;
    e = ferry_take(sub, 2000000000u /* 2 s */, &s);
    if (e != FERRY_OK) {
      status = fail("taking a sample", e);
      break;
    }
    if (s == NULL) {
      printf("subscriber: nothing for 2 s, stopping\n");
      break;
    }
    const Pose* pose = (const Pose*)ferry_sample_data(s);
    const ferry_sample_info_t info = ferry_sample_info(s);
    printf("subscriber: #%llu x=%+.3f y=%+.3f frame=%.16s\n", (unsigned long long)info.sequence,
           pose->x, pose->y, pose->frame);
    ferry_sample_release(s);
    ++received;
  }
  printf("subscriber: received %ld sample(s)\n", received);
  ferry_subscriber_destroy(sub);
  ferry_node_destroy(node);
  return status != 0 ? status : received == count ? 0 : 1;
}

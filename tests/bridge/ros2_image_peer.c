/* A plain Cyclone DDS program built with idlc from ROS 2's own IDL of
 * sensor_msgs/msg/Image (ros2/, the form rosidl_generator_dds_idl writes:
 * type sensor_msgs::msg::dds_::Image_, unbounded string and sequence<uint8>)
 * on DDS topic rt/<TOPIC>, as a ROS 2 camera node uses it. No ferry code.
 * Images follow tests/tools/image_pattern.hpp: image i is 640x480 when i is
 * even, 1920x1080 when odd, rgb8, frame_id camera_<i>, stamp 100+i s
 * 500+i ns, byte p of its data (p * 31 + i) & 0xFF.
 *
 *   ros2_image_peer recv TOPIC N TIMEOUT_S   prints one line per image: "image I WxH ok" or why not
 *   ros2_image_peer send TOPIC FIRST N       writes images FIRST .. FIRST+N-1 (RELIABLE, VOLATILE)
 *   ros2_image_peer send-over TOPIC SIZE I   writes one image whose data is SIZE bytes, then image
 * I
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dds/dds.h"
#include "sensor_msgs/msg/Image_.h"

typedef sensor_msgs_msg_dds__Image_ Image;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static dds_entity_t check(dds_entity_t e, const char* what) {
  if (e < 0) {
    fprintf(stderr, "ros2_image_peer: %s: %s\n", what, dds_strretcode(e));
    exit(2);
  }
  return e;
}

static uint32_t width_of(uint32_t i) { return i % 2 == 0 ? 640 : 1920; }
static uint32_t height_of(uint32_t i) { return i % 2 == 0 ? 480 : 1080; }

/* A RELIABLE, KEEP_ALL endpoint of rt/TOPIC; VOLATILE (Cyclone's default),
 * as a ROS 2 publisher with the default profile. */
static int best_effort = 0; /* the stream mode's writer */

static dds_entity_t topic_of(dds_entity_t pp, const char* name, dds_qos_t** q) {
  char full[256];
  snprintf(full, sizeof full, "rt/%s", name);
  *q = dds_create_qos();
  dds_qset_reliability(*q, best_effort ? DDS_RELIABILITY_BEST_EFFORT : DDS_RELIABILITY_RELIABLE,
                       DDS_SECS(5));
  dds_qset_history(*q, DDS_HISTORY_KEEP_ALL, 0);
  return check(dds_create_topic(pp, &sensor_msgs_msg_dds__Image__desc, full, NULL, NULL),
               "create topic");
}

/* Image i with `size` bytes of data (its pattern's size when 0). */
static void fill(Image* img, uint32_t i, uint32_t size, uint8_t* data, char* frame) {
  memset(img, 0, sizeof *img);
  img->header.stamp.sec = (int32_t)(100 + i);
  img->header.stamp.nanosec = 500 + i;
  snprintf(frame, 32, "camera_%u", i);
  img->header.frame_id = frame;
  img->width = width_of(i);
  img->height = height_of(i);
  img->encoding = "rgb8";
  img->step = img->width * 3;
  if (size == 0) size = img->step * img->height;
  for (uint32_t p = 0; p < size; ++p) data[p] = (uint8_t)((p * 31u + i) & 0xFFu);
  img->data._buffer = data;
  img->data._length = img->data._maximum = size;
  img->data._release = false;
}

static const char* verdict(const Image* img, uint32_t i) {
  static char why[64];
  char frame[32];
  snprintf(frame, sizeof frame, "camera_%u", i);
  if (img->width != width_of(i) || img->height != height_of(i)) return "wrong size";
  if (img->header.stamp.sec != (int32_t)(100 + i) || img->header.stamp.nanosec != 500 + i)
    return "wrong stamp";
  if (img->header.frame_id == NULL || strcmp(img->header.frame_id, frame) != 0)
    return "wrong frame_id";
  if (img->encoding == NULL || strcmp(img->encoding, "rgb8") != 0) return "wrong encoding";
  if (img->step != img->width * 3 || img->is_bigendian != 0) return "wrong step";
  if (img->data._length != img->step * img->height) return "wrong data size";
  for (uint32_t p = 0; p < img->data._length; ++p)
    if (img->data._buffer[p] != (uint8_t)((p * 31u + i) & 0xFFu)) {
      snprintf(why, sizeof why, "wrong pixel %u", p);
      return why;
    }
  return "ok";
}

static int recv_images(dds_entity_t pp, const char* topic, int n, int timeout_s) {
  dds_qos_t* q;
  dds_entity_t tp = topic_of(pp, topic, &q);
  dds_entity_t rd = check(dds_create_reader(pp, tp, q, NULL), "create reader");
  dds_delete_qos(q);
  dds_entity_t ws = check(dds_create_waitset(pp), "create waitset");
  dds_waitset_attach(ws, check(dds_create_readcondition(rd, DDS_ANY_STATE), "readcondition"), 0);
  const int64_t end = now_ns() + (int64_t)timeout_s * 1000000000LL;
  int got = 0;
  while (got < n && now_ns() < end) {
    dds_waitset_wait(ws, NULL, 0, DDS_MSECS(100));
    void* ptr[1] = {NULL};
    dds_sample_info_t info;
    int r;
    while (got < n && (r = dds_take(rd, ptr, &info, 1, 1)) > 0) {
      if (info.valid_data) {
        const Image* img = ptr[0];
        /* the index is in the stamp (100 + i) */
        const uint32_t i = (uint32_t)(img->header.stamp.sec - 100);
        printf("image %u %ux%u %s\n", i, img->width, img->height, verdict(img, i));
        fflush(stdout);
        ++got;
      }
      dds_return_loan(rd, ptr, r);
    }
  }
  return got == n ? 0 : 1;
}

static dds_entity_t matched_writer(dds_entity_t pp, const char* topic) {
  dds_qos_t* q;
  dds_entity_t tp = topic_of(pp, topic, &q);
  dds_entity_t wr = check(dds_create_writer(pp, tp, q, NULL), "create writer");
  dds_delete_qos(q);
  const int64_t end = now_ns() + 10000000000LL;
  dds_publication_matched_status_t st;
  while (now_ns() < end) {
    dds_get_publication_matched_status(wr, &st);
    if (st.current_count > 0) return wr;
    dds_sleepfor(DDS_MSECS(10));
  }
  fprintf(stderr, "ros2_image_peer: no reader matched rt/%s within 10 s\n", topic);
  exit(1);
}

static void write_image(dds_entity_t wr, uint32_t i, uint32_t size) {
  uint8_t* data = malloc(size != 0 ? size : 1920 * 1080 * 3);
  char frame[32];
  Image img;
  fill(&img, i, size, data, frame);
  const dds_return_t rc = dds_write(wr, &img);
  free(data);
  check(rc, "write");
}

static int send_images(dds_entity_t pp, const char* topic, uint32_t first, uint32_t n) {
  dds_entity_t wr = matched_writer(pp, topic);
  for (uint32_t i = first; i < first + n; ++i) write_image(wr, i, 0);
  return dds_wait_for_acks(wr, DDS_SECS(10)) == DDS_RETCODE_OK ? 0 : 1;
}

static int send_over(dds_entity_t pp, const char* topic, uint32_t size, uint32_t next) {
  dds_entity_t wr = matched_writer(pp, topic);
  write_image(wr, next, size);
  write_image(wr, next, 0);
  return dds_wait_for_acks(wr, DDS_SECS(10)) == DDS_RETCODE_OK ? 0 : 1;
}

static int stream(dds_entity_t pp, const char* topic, int seconds) {
  best_effort = 1;
  dds_entity_t wr = matched_writer(pp, topic);
  const int64_t end = now_ns() + (int64_t)seconds * 1000000000LL;
  while (now_ns() < end) {
    write_image(wr, 0, 0);
    dds_sleepfor(DDS_MSECS(20));
  }
  return 0;
}

int main(int argc, char** argv) {
  const char* domain = getenv("DDS_PEER_DOMAIN");
  if (argc < 3) {
    fprintf(stderr, "usage: ros2_image_peer MODE TOPIC ARGS... (see the source)\n");
    return 2;
  }
  dds_entity_t pp =
      check(dds_create_participant(domain ? (dds_domainid_t)atoi(domain) : DDS_DOMAIN_DEFAULT, NULL,
                                   NULL),
            "create participant");
  int rc = 2;
  if (strcmp(argv[1], "recv") == 0 && argc == 5)
    rc = recv_images(pp, argv[2], atoi(argv[3]), atoi(argv[4]));
  else if (strcmp(argv[1], "send") == 0 && argc == 5)
    rc = send_images(pp, argv[2], (uint32_t)atoi(argv[3]), (uint32_t)atoi(argv[4]));
  else if (strcmp(argv[1], "send-over") == 0 && argc == 5)
    rc = send_over(pp, argv[2], (uint32_t)strtoul(argv[3], NULL, 10), (uint32_t)atoi(argv[4]));
  else if (strcmp(argv[1], "stream") == 0 && argc == 4)
    rc = stream(pp, argv[2], atoi(argv[3]));
  else
    fprintf(stderr, "ros2_image_peer: unknown mode or wrong arguments: %s\n", argv[1]);
  dds_delete(pp);
  return rc;
}

/* A plain Cyclone DDS program, compiled from the hand-written IDL
 * ferry_types.idl with idlc: the other end of the bridge's interop tests and
 * the baseline of its measurements. No ferry code in here.
 *
 *   dds_peer recv-all TOPIC N TIMEOUT_S     print N All_ samples, one line each
 *   dds_peer send-all TOPIC N               publish N All_ samples (values from the index)
 *   dds_peer send-bytes TOPIC SIZE N        publish N Bytes_ samples of SIZE bytes
 *   dds_peer pong TYPE                      echo rt/bench/ping to rt/bench/pong (TYPE small|frame)
 *   dds_peer ping TYPE ROUNDS               round trips over pong; prints p50 one-way in ns
 *   dds_peer flood TYPE SECONDS             write rt/bench/flood as fast as acks allow
 *   dds_peer sink TYPE SECONDS              count rt/bench/flood; prints samples/s
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dds/dds.h"
#include "ferry_types.h"

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char* what, dds_return_t rc) {
  fprintf(stderr, "dds_peer: %s: %s\n", what, dds_strretcode(rc));
  exit(2);
}

static dds_entity_t check(dds_entity_t e, const char* what) {
  if (e < 0) die(what, e);
  return e;
}

static dds_qos_t* reliable_qos(int keep_all, int depth) {
  dds_qos_t* q = dds_create_qos();
  dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_SECS(1));
  if (keep_all)
    dds_qset_history(q, DDS_HISTORY_KEEP_ALL, 0);
  else
    dds_qset_history(q, DDS_HISTORY_KEEP_LAST, depth);
  return q;
}

static dds_entity_t topic_of(dds_entity_t pp, const dds_topic_descriptor_t* d, const char* name,
                             const dds_qos_t* q) {
  char full[256];
  snprintf(full, sizeof full, "rt/%s", name);
  return check(dds_create_topic(pp, d, full, q, NULL), "create topic");
}

/* Waits up to 10 s for a matched reader. */
static void wait_matched_reader(dds_entity_t wr) {
  const int64_t end = now_ns() + 10000000000LL;
  dds_publication_matched_status_t st;
  while (now_ns() < end) {
    dds_get_publication_matched_status(wr, &st);
    if (st.current_count > 0) return;
    dds_sleepfor(DDS_MSECS(10));
  }
  fprintf(stderr, "dds_peer: no reader matched within 10 s\n");
  exit(1);
}

static void wait_matched_writer(dds_entity_t rd) {
  const int64_t end = now_ns() + 10000000000LL;
  dds_subscription_matched_status_t st;
  while (now_ns() < end) {
    dds_get_subscription_matched_status(rd, &st);
    if (st.current_count > 0) return;
    dds_sleepfor(DDS_MSECS(10));
  }
  fprintf(stderr, "dds_peer: no writer matched within 10 s\n");
  exit(1);
}

static void fill_all(ferry_msg_dds__All_* s, uint32_t i) {
  memset(s, 0, sizeof *s);
  s->b = (i % 2) != 0;
  s->i8 = (int8_t)(-(int)(i % 100));
  s->i16 = (int16_t)(-1000 - (int)i);
  s->i32 = -100000 - (int32_t)i;
  s->i64 = -10000000000LL - (int64_t)i;
  s->u8 = (uint8_t)(200 + i % 50);
  s->u16 = (uint16_t)(60000 + i);
  s->u32 = 4000000000u + i;
  s->u64 = 18000000000000000000ull + i;
  s->f32 = 1.5f + (float)i;
  s->f64 = -2.25 - (double)i;
  snprintf((char*)s->name, sizeof s->name, "dds-%u", i);
  for (int k = 0; k < 3; ++k) s->arr[k] = (int32_t)(i * 10 + (uint32_t)k);
  s->inner.flag = true;
  snprintf((char*)s->inner.label, sizeof s->inner.label, "in%u", i % 10000);
  s->inner.value = 0.5 * i;
  for (int k = 0; k < 2; ++k) {
    s->inners[k].flag = k == 1;
    snprintf((char*)s->inners[k].label, sizeof s->inners[k].label, "k%d", k);
    s->inners[k].value = 100.0 * k + i;
  }
}

static void print_label(const uint8_t* p, size_t n) {
  for (size_t k = 0; k < n && p[k] != 0; ++k) putchar(p[k]);
}

static void print_all(const ferry_msg_dds__All_* s) {
  printf("b=%d i8=%d i16=%d i32=%" PRId32 " i64=%" PRId64 " u8=%u u16=%u u32=%" PRIu32
         " u64=%" PRIu64 " f32=%g f64=%g name=",
         s->b, s->i8, s->i16, s->i32, s->i64, s->u8, s->u16, s->u32, s->u64, s->f32, s->f64);
  print_label(s->name, sizeof s->name);
  printf(" arr=%d,%d,%d inner=%d/", s->arr[0], s->arr[1], s->arr[2], s->inner.flag);
  print_label(s->inner.label, sizeof s->inner.label);
  printf("/%g", s->inner.value);
  for (int k = 0; k < 2; ++k) {
    printf(" inners%d=%d/", k, s->inners[k].flag);
    print_label(s->inners[k].label, sizeof s->inners[k].label);
    printf("/%g", s->inners[k].value);
  }
  printf("\n");
  fflush(stdout);
}

static int recv_all(dds_entity_t pp, const char* topic, int n, int timeout_s) {
  dds_qos_t* q = reliable_qos(1, 0);
  dds_entity_t tp = topic_of(pp, &ferry_msg_dds__All__desc, topic, q);
  dds_entity_t rd = check(dds_create_reader(pp, tp, q, NULL), "create reader");
  dds_delete_qos(q);
  const int64_t end = now_ns() + (int64_t)timeout_s * 1000000000LL;
  int got = 0;
  while (got < n && now_ns() < end) {
    void* ptr[1] = {NULL};
    dds_sample_info_t info;
    const int r = dds_take(rd, ptr, &info, 1, 1);
    if (r > 0 && info.valid_data) {
      print_all((const ferry_msg_dds__All_*)ptr[0]);
      ++got;
    }
    if (r > 0) dds_return_loan(rd, ptr, r);
    if (r <= 0) dds_sleepfor(DDS_MSECS(2));
  }
  return got == n ? 0 : 1;
}

static int send_all(dds_entity_t pp, const char* topic, int n) {
  dds_qos_t* q = reliable_qos(1, 0);
  dds_entity_t tp = topic_of(pp, &ferry_msg_dds__All__desc, topic, q);
  dds_entity_t wr = check(dds_create_writer(pp, tp, q, NULL), "create writer");
  dds_delete_qos(q);
  wait_matched_reader(wr);
  for (int i = 0; i < n; ++i) {
    ferry_msg_dds__All_ s;
    fill_all(&s, (uint32_t)i);
    const dds_return_t rc = dds_write(wr, &s);
    if (rc != DDS_RETCODE_OK) die("write", rc);
  }
  dds_wait_for_acks(wr, DDS_SECS(5));
  return 0;
}

static int send_bytes(dds_entity_t pp, const char* topic, uint32_t size, int n) {
  dds_qos_t* q = reliable_qos(1, 0);
  dds_entity_t tp = topic_of(pp, &ferry_msg_dds__Bytes__desc, topic, q);
  dds_entity_t wr = check(dds_create_writer(pp, tp, q, NULL), "create writer");
  dds_delete_qos(q);
  wait_matched_reader(wr);
  uint8_t* data = calloc(size ? size : 1, 1);
  for (int i = 0; i < n; ++i) {
    memset(data, 'a' + i % 26, size);
    ferry_msg_dds__Bytes_ s = {
        .data = {._maximum = size, ._length = size, ._buffer = data, ._release = false}};
    const dds_return_t rc = dds_write(wr, &s);
    if (rc != DDS_RETCODE_OK) die("write", rc);
  }
  dds_wait_for_acks(wr, DDS_SECS(5));
  free(data);
  return 0;
}

/* The benchmark types: Small_ (64 B) and Frame_ (1080p NV12). */
static const dds_topic_descriptor_t* bench_type(const char* name, size_t* size) {
  if (strcmp(name, "frame") == 0) {
    *size = sizeof(ferry_msg_dds__Frame_);
    return &ferry_msg_dds__Frame__desc;
  }
  *size = sizeof(ferry_msg_dds__Small_);
  return &ferry_msg_dds__Small__desc;
}

static int cmp_i64(const void* a, const void* b) {
  const int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
  return x < y ? -1 : x > y;
}

static int ping_pong(dds_entity_t pp, const char* type, int rounds, int is_ping) {
  size_t size;
  const dds_topic_descriptor_t* d = bench_type(type, &size);
  dds_qos_t* q = reliable_qos(0, 4);
  dds_entity_t ping = topic_of(pp, d, "bench/ping", q);
  dds_entity_t pong = topic_of(pp, d, "bench/pong", q);
  dds_entity_t wr = check(dds_create_writer(pp, is_ping ? ping : pong, q, NULL), "create writer");
  dds_entity_t rd = check(dds_create_reader(pp, is_ping ? pong : ping, q, NULL), "create reader");
  dds_delete_qos(q);
  dds_entity_t ws = dds_create_waitset(pp);
  dds_entity_t rc_ = dds_create_readcondition(rd, DDS_ANY_STATE);
  dds_waitset_attach(ws, rc_, 0);
  void* sample = calloc(1, size);
  if (!is_ping) {
    const int64_t end = now_ns() + (int64_t)rounds * 1000000000LL; /* rounds: seconds to live */
    while (now_ns() < end) {
      dds_waitset_wait(ws, NULL, 0, DDS_MSECS(100));
      void* ptr[1] = {NULL};
      dds_sample_info_t info;
      int r;
      while ((r = dds_take(rd, ptr, &info, 1, 1)) > 0) {
        if (info.valid_data) dds_write(wr, ptr[0]);
        dds_return_loan(rd, ptr, r);
      }
    }
    return 0;
  }
  wait_matched_reader(wr);
  wait_matched_writer(rd);
  int64_t* rtt = calloc((size_t)rounds, sizeof *rtt);
  int done = 0;
  for (int i = -20; i < rounds; ++i) { /* 20 warm-up rounds */
    const int64_t t0 = now_ns();
    ((ferry_msg_dds__Small_*)sample)->seq = (uint64_t)(i + 20);
    dds_write(wr, sample);
    int back = 0;
    while (!back && now_ns() - t0 < 2000000000LL) {
      dds_waitset_wait(ws, NULL, 0, DDS_MSECS(100));
      void* ptr[1] = {NULL};
      dds_sample_info_t info;
      int r;
      while ((r = dds_take(rd, ptr, &info, 1, 1)) > 0) {
        if (info.valid_data) back = 1;
        dds_return_loan(rd, ptr, r);
      }
    }
    if (!back) continue;
    if (i >= 0) rtt[done++] = now_ns() - t0;
  }
  qsort(rtt, (size_t)done, sizeof *rtt, cmp_i64);
  printf("rounds %d p50_one_way_ns %" PRId64 "\n", done, done ? rtt[done / 2] / 2 : -1);
  return done > 0 ? 0 : 1;
}

static int flood(dds_entity_t pp, const char* type, int seconds) {
  size_t size;
  const dds_topic_descriptor_t* d = bench_type(type, &size);
  dds_qos_t* q = reliable_qos(1, 0);
  dds_entity_t tp = topic_of(pp, d, "bench/flood", q);
  dds_entity_t wr = check(dds_create_writer(pp, tp, q, NULL), "create writer");
  dds_delete_qos(q);
  wait_matched_reader(wr);
  void* sample = calloc(1, size);
  const int64_t end = now_ns() + (int64_t)seconds * 1000000000LL;
  uint64_t sent = 0;
  while (now_ns() < end) {
    ((ferry_msg_dds__Small_*)sample)->seq = sent;
    if (dds_write(wr, sample) == DDS_RETCODE_OK) ++sent;
  }
  dds_wait_for_acks(wr, DDS_SECS(5));
  printf("sent %" PRIu64 "\n", sent);
  return 0;
}

static int sink(dds_entity_t pp, const char* type, int seconds) {
  size_t size;
  const dds_topic_descriptor_t* d = bench_type(type, &size);
  dds_qos_t* q = reliable_qos(1, 0);
  dds_entity_t tp = topic_of(pp, d, "bench/flood", q);
  dds_entity_t rd = check(dds_create_reader(pp, tp, q, NULL), "create reader");
  dds_delete_qos(q);
  dds_entity_t ws = dds_create_waitset(pp);
  dds_entity_t rc_ = dds_create_readcondition(rd, DDS_ANY_STATE);
  dds_waitset_attach(ws, rc_, 0);
  const int64_t end = now_ns() + (int64_t)seconds * 1000000000LL;
  int64_t first = 0, last = 0;
  uint64_t got = 0;
  while (now_ns() < end) {
    dds_waitset_wait(ws, NULL, 0, DDS_MSECS(100));
    void* ptr[16] = {NULL};
    dds_sample_info_t info[16];
    int r;
    while ((r = dds_take(rd, ptr, info, 16, 16)) > 0) {
      for (int k = 0; k < r; ++k)
        if (info[k].valid_data) {
          if (got == 0) first = now_ns();
          ++got;
          last = now_ns();
        }
      dds_return_loan(rd, ptr, r);
    }
  }
  const double secs = (double)(last - first) / 1e9;
  printf("received %" PRIu64 " per_s %.1f\n", got,
         got > 1 && secs > 0 ? (double)(got - 1) / secs : 0.0);
  return got > 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: dds_peer MODE ARGS... (see the source)\n");
    return 2;
  }
  const char* mode = argv[1];
  /* The tests give each run its own DDS domain. */
  const char* domain = getenv("DDS_PEER_DOMAIN");
  dds_entity_t pp =
      check(dds_create_participant(domain ? (dds_domainid_t)atoi(domain) : DDS_DOMAIN_DEFAULT, NULL,
                                   NULL),
            "create participant");
  int rc = 2;
  if (strcmp(mode, "recv-all") == 0 && argc == 5)
    rc = recv_all(pp, argv[2], atoi(argv[3]), atoi(argv[4]));
  else if (strcmp(mode, "send-all") == 0 && argc == 4)
    rc = send_all(pp, argv[2], atoi(argv[3]));
  else if (strcmp(mode, "send-bytes") == 0 && argc == 5)
    rc = send_bytes(pp, argv[2], (uint32_t)atoi(argv[3]), atoi(argv[4]));
  else if (strcmp(mode, "pong") == 0 && argc == 4)
    rc = ping_pong(pp, argv[2], atoi(argv[3]), 0);
  else if (strcmp(mode, "ping") == 0 && argc == 4)
    rc = ping_pong(pp, argv[2], atoi(argv[3]), 1);
  else if (strcmp(mode, "flood") == 0 && argc == 4)
    rc = flood(pp, argv[2], atoi(argv[3]));
  else if (strcmp(mode, "sink") == 0 && argc == 4)
    rc = sink(pp, argv[2], atoi(argv[3]));
  else
    fprintf(stderr, "dds_peer: unknown mode or wrong arguments: %s\n", mode);
  dds_delete(pp);
  return rc;
}

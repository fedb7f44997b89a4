/* A plain Cyclone DDS program that plays a ROS 2 client or a ROS 2 service
 * of example_interfaces/srv/AddTwoInts the way rmw_cyclonedds does
 * (rmw_node.cpp): topics rq/NAMERequest and rr/NAMEReply, the request header
 * (client guid = the instance handle of the client's request writer, a
 * sequence number counting from 1) before the fields, echoed in the reply;
 * "clientid=ID;" / "serviceid=ID;" in the endpoints' user data. Built with
 * idlc from the hand-written ros_services.idl; no ferry code in here.
 *
 *   srv_peer client NAME CALLS BATCH   CALLS calls, BATCH in flight at once;
 *                                      checks each sum; prints "ok CALLS"; exit
 *                                      4 when replies take over SRV_PEER_TIMEOUT_MS
 *   srv_peer server NAME VANISH        answers sum = a + b; with VANISH >= 0,
 *                                      exits without answering (and without
 *                                      saying goodbye) on request VANISH + 1
 * Its domain is DDS_PEER_DOMAIN; its lease 1 s, so that a vanished peer is
 * noticed within about a second.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dds/dds.h"
#include "ros_services.h"

typedef example_interfaces_srv_dds__AddTwoInts_Request_ Request;
typedef example_interfaces_srv_dds__AddTwoInts_Response_ Response;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static dds_entity_t check(dds_entity_t e, const char* what) {
  if (e < 0) {
    fprintf(stderr, "srv_peer: %s: %s\n", what, dds_strretcode(e));
    exit(2);
  }
  return e;
}

/* RELIABLE, KEEP_LAST 10, VOLATILE (ROS 2's service default) and the id. */
static dds_qos_t* service_qos(const char* key, dds_entity_t pp) {
  dds_guid_t g;
  char id[128];
  char user_data[160];
  size_t at = 0;
  dds_qos_t* q = dds_create_qos();
  dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_INFINITY);
  dds_qset_history(q, DDS_HISTORY_KEEP_LAST, 10);
  dds_qset_durability(q, DDS_DURABILITY_VOLATILE);
  dds_get_guid(pp, &g);
  g.v[15] = 1; /* the participant's first client/service */
  at += (size_t)snprintf(id + at, sizeof id - at, "%02x", g.v[0]);
  for (int i = 1; i < 16; i++) at += (size_t)snprintf(id + at, sizeof id - at, ".%x", g.v[i]);
  snprintf(user_data, sizeof user_data, "%s=%s;", key, id);
  dds_qset_userdata(q, user_data, strlen(user_data));
  return q;
}

static int client(dds_entity_t pp, const char* name, int calls, int batch) {
  char rq[256], rr[256];
  snprintf(rq, sizeof rq, "rq/%sRequest", name);
  snprintf(rr, sizeof rr, "rr/%sReply", name);
  dds_qos_t* q = service_qos("clientid", pp);
  dds_entity_t tq = check(
      dds_create_topic(pp, &example_interfaces_srv_dds__AddTwoInts_Request__desc, rq, q, NULL),
      "topic rq");
  dds_entity_t tr = check(
      dds_create_topic(pp, &example_interfaces_srv_dds__AddTwoInts_Response__desc, rr, q, NULL),
      "topic rr");
  dds_entity_t wr = check(dds_create_writer(pp, tq, q, NULL), "request writer");
  dds_entity_t rd = check(dds_create_reader(pp, tr, q, NULL), "reply reader");
  dds_delete_qos(q);
  dds_instance_handle_t guid;
  dds_get_instance_handle(wr, &guid);
  /* rmw_service_server_is_available: a request reader and a reply writer matched. */
  int64_t end = now_ns() + 10000000000LL;
  for (;;) {
    dds_publication_matched_status_t w;
    dds_subscription_matched_status_t r;
    dds_get_publication_matched_status(wr, &w);
    dds_get_subscription_matched_status(rd, &r);
    if (w.current_count > 0 && r.current_count > 0) break;
    if (now_ns() > end) {
      fprintf(stderr, "srv_peer: no service on %s within 10 s\n", rq);
      return 3;
    }
    dds_sleepfor(DDS_MSECS(10));
  }
  dds_entity_t ws = dds_create_waitset(pp);
  dds_entity_t cond = dds_create_readcondition(rd, DDS_ANY_STATE);
  dds_waitset_attach(ws, cond, 0);
  const char* t = getenv("SRV_PEER_TIMEOUT_MS");
  const int64_t timeout_ns = (t ? atoll(t) : 5000) * 1000000LL;
  int64_t seq = 0;
  for (int done = 0; done < calls;) {
    int n = calls - done < batch ? calls - done : batch;
    int64_t first = seq + 1;
    for (int i = 0; i < n; i++) {
      ++seq;
      Request req = {guid, seq, seq * 3, 1000};
      if (dds_write(wr, &req) != DDS_RETCODE_OK) {
        fprintf(stderr, "srv_peer: write failed\n");
        return 2;
      }
    }
    int got = 0;
    char seen[64] = {0};
    end = now_ns() + timeout_ns;
    while (got < n) {
      Response resp;
      void* ptr = &resp;
      dds_sample_info_t info;
      if (dds_take(rd, &ptr, &info, 1, 1) != 1) {
        if (now_ns() > end) {
          fprintf(stderr, "srv_peer: %d of %d replies in time (calls %" PRId64 "..)\n", got, n,
                  first);
          return 4;
        }
        dds_waitset_wait(ws, NULL, 0, DDS_MSECS(100));
        continue;
      }
      if (!info.valid_data || resp.client_guid != guid) continue; /* another client's */
      int64_t k = resp.sequence_number - first;
      if (k < 0 || k >= n || seen[k]) {
        fprintf(stderr, "srv_peer: reply to no call in flight: seq %" PRId64 "\n",
                resp.sequence_number);
        return 5;
      }
      if (resp.sum != resp.sequence_number * 3 + 1000) {
        fprintf(stderr, "srv_peer: call %" PRId64 ": sum %" PRId64 ", expected %" PRId64 "\n",
                resp.sequence_number, resp.sum, resp.sequence_number * 3 + 1000);
        return 6;
      }
      seen[k] = 1;
      got++;
    }
    done += n;
  }
  printf("ok %d\n", calls);
  fflush(stdout);
  return 0;
}

static int server(dds_entity_t pp, const char* name, int vanish) {
  char rq[256], rr[256];
  snprintf(rq, sizeof rq, "rq/%sRequest", name);
  snprintf(rr, sizeof rr, "rr/%sReply", name);
  dds_qos_t* q = service_qos("serviceid", pp);
  dds_entity_t tq = check(
      dds_create_topic(pp, &example_interfaces_srv_dds__AddTwoInts_Request__desc, rq, q, NULL),
      "topic rq");
  dds_entity_t tr = check(
      dds_create_topic(pp, &example_interfaces_srv_dds__AddTwoInts_Response__desc, rr, q, NULL),
      "topic rr");
  dds_entity_t rd = check(dds_create_reader(pp, tq, q, NULL), "request reader");
  dds_entity_t wr = check(dds_create_writer(pp, tr, q, NULL), "reply writer");
  dds_delete_qos(q);
  dds_entity_t ws = dds_create_waitset(pp);
  dds_entity_t cond = dds_create_readcondition(rd, DDS_ANY_STATE);
  dds_waitset_attach(ws, cond, 0);
  printf("serving %s\n", rq);
  fflush(stdout);
  int answered = 0;
  for (;;) {
    Request req;
    void* ptr = &req;
    dds_sample_info_t info;
    if (dds_take(rd, &ptr, &info, 1, 1) != 1) {
      dds_waitset_wait(ws, NULL, 0, DDS_MSECS(100));
      continue;
    }
    if (!info.valid_data) continue;
    if (vanish >= 0 && answered == vanish) {
      printf("vanishing on call %" PRId64 "\n", req.sequence_number);
      fflush(stdout);
      _exit(0); /* no goodbye: the others notice when its lease ends */
    }
    Response resp = {req.client_guid, req.sequence_number, req.a + req.b};
    if (dds_write(wr, &resp) != DDS_RETCODE_OK) {
      fprintf(stderr, "srv_peer: reply write failed\n");
      return 2;
    }
    answered++;
  }
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: srv_peer client NAME CALLS BATCH | server NAME VANISH\n");
    return 2;
  }
  const char* env = getenv("DDS_PEER_DOMAIN");
  const dds_domainid_t domain = env ? (dds_domainid_t)atoi(env) : 0;
  check(dds_create_domain(domain,
                          "<CycloneDDS><Domain><Discovery><LeaseDuration>1 s"
                          "</LeaseDuration></Discovery></Domain></CycloneDDS>"),
        "create domain");
  dds_entity_t pp = check(dds_create_participant(domain, NULL, NULL), "create participant");
  int rc = 2;
  if (strcmp(argv[1], "client") == 0 && argc >= 5) {
    rc = client(pp, argv[2], atoi(argv[3]), atoi(argv[4]));
  } else if (strcmp(argv[1], "server") == 0) {
    rc = server(pp, argv[2], atoi(argv[3]));
  }
  dds_delete(DDS_CYCLONEDDS_HANDLE);
  return rc;
}

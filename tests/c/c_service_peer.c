/* A C program on one side of a service (tests/c/test_c_services.cpp):
 *   c_service_peer server N   answers N calls of calc/add (sum = a + b), then exits
 *   c_service_peer client N   makes N calls (one by ferry_call, the rest by
 *                             ferry_send and ferry_pending_take) and checks them
 * Exit 0 when every call was right; the failing call's sentence on stderr otherwise. */
#include <ferry/ferry.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct AddRequest {
  uint64_t client, n, a, b;
} AddRequest;
typedef struct AddResponse {
  uint64_t client, n, sum;
} AddResponse;

static int failed(const char* what) {
  fprintf(stderr, "c_service_peer: %s: %s\n", what, ferry_last_error());
  return 1;
}

static int serve(ferry_node_t* node, uint64_t count) {
  ferry_server_t* server = NULL;
  if (ferry_server_create(node, "calc/add", "AddRequest", sizeof(AddRequest), "AddResponse",
                          sizeof(AddResponse), &server) != FERRY_OK)
    return failed("ferry_server_create");
  printf("ready\n");
  fflush(stdout);
  uint64_t served = 0;
  while (served < count) {
    ferry_request_t request;
    int taken = 0;
    if (ferry_take_request(server, 5000000000ULL, &request, &taken) != FERRY_OK)
      return failed("ferry_take_request");
    if (!taken) return failed("no request within 5 s");
    AddRequest q;
    memcpy(&q, request.data, sizeof q);
    if (q.a == UINT64_MAX) {
      ferry_request_drop(server, &request); /* the client gets NO_RESPONSE */
    } else {
      AddResponse r = {q.client, q.n, q.a + q.b};
      if (ferry_respond(server, &request, &r) != FERRY_OK) return failed("ferry_respond");
    }
    ++served;
  }
  ferry_server_destroy(server);
  return 0;
}

static int call(ferry_node_t* node, uint64_t count) {
  ferry_client_t* client = NULL;
  if (ferry_client_create(node, "calc/add", "AddRequest", sizeof(AddRequest), "AddResponse",
                          sizeof(AddResponse), &client) != FERRY_OK)
    return failed("ferry_client_create");
  if (ferry_client_wait_for_server(client, 5000000000ULL) != FERRY_OK)
    return failed("ferry_client_wait_for_server");
  AddRequest q = {7, 0, 40, 2};
  AddResponse r;
  if (ferry_call(client, &q, &r, 2000000000ULL) != FERRY_OK) return failed("ferry_call");
  if (r.sum != 42 || r.n != 0) return failed("a wrong answer to ferry_call");
  for (uint64_t n = 1; n < count; n += 4) {
    ferry_pending_t pending[4];
    for (int i = 0; i < 4; ++i) {
      AddRequest qi = {7, n + (uint64_t)i, n, (uint64_t)i};
      if (ferry_send(client, &qi, &pending[i]) != FERRY_OK) return failed("ferry_send");
    }
    for (int i = 3; i >= 0; --i) {
      if (ferry_pending_take(client, &pending[i], &r, 2000000000ULL) != FERRY_OK)
        return failed("ferry_pending_take");
      if (r.n != n + (uint64_t)i || r.sum != n + (uint64_t)i) return failed("a crossed answer");
    }
  }
  ferry_client_destroy(client);
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  ferry_node_t* node = NULL;
  if (ferry_node_create("c-service-peer", NULL, &node) != FERRY_OK)
    return failed("ferry_node_create");
  const uint64_t count = strtoull(argv[2], NULL, 10);
  const int code = strcmp(argv[1], "server") == 0 ? serve(node, count) : call(node, count);
  ferry_node_destroy(node);
  return code;
}

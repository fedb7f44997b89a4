"""Services from Python (docs/services.md): a Python client calls a Python server in another
process, and errors are ferry.Error with the same reasons as C++."""

import subprocess
import sys
import textwrap

import pytest

import ferry

SERVICE_YAML = """types:
  AddRequest:
    fields:
      - { name: a, type: i64 }
      - { name: b, type: i64 }
  AddResponse:
    fields:
      - { name: sum, type: i64 }
      - { name: label, type: "char[16]" }
services:
  - { name: calc/add, request: AddRequest, response: AddResponse, capacity: 4 }
"""

SERVER = textwrap.dedent("""
    import sys
    import ferry
    node = ferry.Node("py-server")
    srv = node.server("calc/add")
    print("ready", flush=True)
    served = 0
    while served < int(sys.argv[1]):
        req = srv.take_request(timeout=5.0)
        if req is None:
            sys.exit(3)
        if req["a"] < 0:
            del req                     # unanswered: the client gets NoResponse
        else:
            req.respond({"sum": req["a"] + req["b"], "label": "py"})
        served += 1
""")


@pytest.fixture
def service_domain(bare_domain):
    bare_domain.start(SERVICE_YAML)
    return bare_domain


def test_calls_across_processes(service_domain):
    server = service_domain.spawn([sys.executable, "-c", SERVER, "101"])
    assert server.stdout.readline().strip() == "ready"
    node = ferry.Node("py-client")
    client = node.client("calc/add")
    assert client.wait_for_server(timeout=5.0)
    for n in range(100):
        assert client.call({"a": n, "b": 2}, timeout=5.0) == {"sum": n + 2, "label": "py"}
    with pytest.raises(ferry.Error, match="NoResponse"):
        client.call({"a": -1}, timeout=5.0)
    assert server.wait(timeout=10) == 0, server.stderr.read()


def test_bad_requests_and_no_server(service_domain):
    node = ferry.Node("py-lonely")
    client = node.client("calc/add")
    assert not client.has_server
    with pytest.raises(ferry.Error, match="NoServer"):
        client.call({"a": 1}, timeout=0.1)
    with pytest.raises(ferry.Error, match="'c'"):
        client.call({"c": 1})
    with pytest.raises(ferry.Error, match="not declared"):
        node.client("nope")


def test_python_server_for_a_python_client_in_one_process(service_domain):
    node = ferry.Node("py-both")
    srv = node.server("calc/add")
    client = node.client("calc/add")
    assert client.wait_for_server(timeout=5.0)
    other = ferry.Node("py-second")
    with pytest.raises(ferry.Error, match="py-both"):
        other.server("calc/add")
    import threading
    done = []

    def serve():
        req = srv.take_request(timeout=5.0)
        assert req.info.sequence == 0
        req.respond({"sum": req.to_dict()["a"] * 10})
        done.append(True)

    t = threading.Thread(target=serve)
    t.start()
    assert client.call({"a": 4}, timeout=5.0)["sum"] == 40
    t.join()
    assert done


WAITING_SERVER = textwrap.dedent("""
    import sys
    import ferry
    node = ferry.Node("py-waiting-server")
    srv = node.server("calc/add")
    ws = ferry.WaitSet()
    ws.attach(srv)
    print("ready", flush=True)
    served = 0
    while served < int(sys.argv[1]):
        ready = ws.wait(timeout=5.0)
        if ready != [srv]:
            sys.exit(3)
        while (req := srv.take_request()) is not None:   # never waits: the WaitSet said so
            req.respond({"sum": req["a"] + req["b"], "label": "waited"})
            served += 1
    ws.detach(srv)
""")


def test_waitset_wakes_on_a_request_and_on_a_response(service_domain):
    server = service_domain.spawn([sys.executable, "-c", WAITING_SERVER, "8"])
    assert server.stdout.readline().strip() == "ready"
    node = ferry.Node("py-waiting-client")
    client = node.client("calc/add")
    assert client.wait_for_server(timeout=5.0)
    ws = ferry.WaitSet()
    ws.attach(client)
    assert ws.wait(timeout=0.05) == []              # no call, no response
    for round_ in range(2):
        pending = [client.send({"a": round_ * 4 + k, "b": 1}) for k in range(4)]
        sums = {}
        while len(sums) < len(pending):
            assert ws.wait(timeout=5.0) == [client]
            for k, p in enumerate(pending):
                if k not in sums and (r := p.try_take()) is not None:
                    sums[k] = r
        assert [sums[k] for k in range(4)] == [
            {"sum": round_ * 4 + k + 1, "label": "waited"} for k in range(4)]
        with pytest.raises(ferry.Error, match="ended already"):
            pending[0].take()
    ws.detach(client)
    assert server.wait(timeout=10) == 0, server.stderr.read()
    with pytest.raises(ferry.Error, match="NoServer|ServerGone"):
        client.send({"a": 1, "b": 1}).take(timeout=1.0)

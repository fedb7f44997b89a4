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

// `import ferry`: the Python module (docs/python.md). The classes live in
// ports.hpp; this file only says how Python sees them.
#include <fmt/format.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>

#include "ferry/error.hpp"
#include "ferry/node.hpp"
#include "ports.hpp"
#include "services.hpp"

namespace py = pybind11;
using namespace ferry::python;

namespace {

// The C++ node, shared by the ports created through it (they keep its
// connection to ferryd alive on their own).
class Node {
 public:
  Node(std::string name, std::optional<std::string> domain)
      : node_(std::move(name), ferry::NodeOptions{.domain = domain.value_or("")}) {}
  // The schema is asked for before the port is created, so that peers that
  // wait for a match (a publisher waiting for subscribers) find the port
  // ready to use; a topic that is neither declared nor used yet is typed by
  // its first port, so then it is asked for again.
  Publisher publisher(const std::string& topic) {
    TopicSchema described = describe_topic(node_.domain(), topic);
    ferry::RawPublisher port = node_.raw_publisher(topic);
    if (described.type_name.empty()) described = describe_topic(node_.domain(), topic);
    return Publisher(std::move(port), std::move(described));
  }
  Subscriber subscriber(const std::string& topic) {
    TopicSchema described = describe_topic(node_.domain(), topic);
    ferry::RawSubscriber port = node_.raw_subscriber(topic);
    if (described.type_name.empty()) described = describe_topic(node_.domain(), topic);
    return Subscriber(std::move(port), std::move(described));
  }
  // Services (docs/services.md): the service must be declared (its types
  // come from the configuration).
  Client client(const std::string& service) {
    ServiceSchema schema = describe_service(node_.domain(), service);
    return Client(node_.raw_client(service), std::move(schema));
  }
  Server server(const std::string& service) {
    ServiceSchema schema = describe_service(node_.domain(), service);
    return Server(node_.raw_server(service), std::move(schema));
  }
  [[nodiscard]] const std::string& name() const noexcept { return node_.name(); }
  [[nodiscard]] const std::string& domain() const noexcept { return node_.domain(); }

 private:
  ferry::Node node_;
};

std::string result_repr(const ferry::PublishResult& r) {
  return fmt::format("PublishResult(delivered={}, dropped={}, overwritten={}, timed_out={})",
                     r.delivered, r.dropped, r.overwritten, r.timed_out);
}

}  // namespace

PYBIND11_MODULE(ferry, m) {
  // Every sample is a numpy view: an interpreter without numpy (a venv, a
  // pyenv build) must hear it now, not at its first publisher.
  try {
    (void)py::module_::import("numpy");
  } catch (py::error_already_set& e) {
    const py::module_ sys = py::module_::import("sys");
    const std::string version = py::str(sys.attr("version")).cast<std::string>();
    throw py::import_error(fmt::format(
        "the ferry module needs numpy, which this Python ({}, version {}) cannot import ({}); "
        "install numpy for this interpreter (Debian: apt-get install python3-numpy; a venv: pip "
        "install numpy)",
        py::str(sys.attr("executable")).cast<std::string>(), version.substr(0, version.find(' ')),
        e.what()));
  }
  m.doc() = "ferry: shared-memory publish/subscribe; samples as zero-copy numpy views";
  py::register_exception<ferry::Error>(m, "Error");

  py::class_<ferry::PublishResult>(m, "PublishResult",
                                   "What became of one published sample, counted in subscriber "
                                   "queues.")
      .def_readonly("delivered", &ferry::PublishResult::delivered)
      .def_readonly("dropped", &ferry::PublishResult::dropped)
      .def_readonly("overwritten", &ferry::PublishResult::overwritten)
      .def_readonly("timed_out", &ferry::PublishResult::timed_out)
      .def("__repr__", &result_repr);

  py::class_<ferry::SampleInfo>(m, "SampleInfo",
                                "What a sample carries besides its bytes (docs/cpp-api.md).")
      .def_readonly("sequence", &ferry::SampleInfo::sequence,
                    "Per publisher, 0, 1, 2, ...: a gap is samples this subscriber did not get.")
      .def_readonly("publisher_id", &ferry::SampleInfo::publisher_id,
                    "Unique in the domain while the publisher lives.")
      .def_readonly("publish_time_ns", &ferry::SampleInfo::publish_time_ns,
                    "CLOCK_REALTIME at publish(), nanoseconds.")
      .def("__repr__", [](const ferry::SampleInfo& i) {
        return "SampleInfo(sequence=" + std::to_string(i.sequence) +
               ", publisher_id=" + std::to_string(i.publisher_id) +
               ", publish_time_ns=" + std::to_string(i.publish_time_ns) + ")";
      });

  py::class_<Sample>(m, "Sample",
                     "A taken sample, valid until release() (or the end of a `with` block). Its "
                     "numpy views keep it held while they live.")
      .def("__getitem__", &Sample::item, py::arg("field"))
      .def("to_dict", &Sample::to_dict)
      .def_property_readonly(
          "array", &Sample::array,
          "Read-only numpy structured view of the sample in shared memory (no copy); "
          "uint8 for bytes and opaque topics.")
      .def_property_readonly("data", &Sample::data, "Read-only memoryview of the sample's bytes.")
      .def_property_readonly("size", &Sample::size)
      .def_property_readonly("topic", &Sample::topic)
      .def_property_readonly("released", &Sample::released)
      .def_property_readonly("info", &Sample::info,
                             "SampleInfo: sequence, publisher_id, publish_time_ns.")
      .def("release", &Sample::release)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](Sample& self, py::args) { self.release(); });

  py::class_<Loan>(m, "Loan",
                   "A chunk of the shared pool to fill in place and publish without a copy.")
      .def_property_readonly("array", &Loan::array,
                             "Writable numpy structured view of the chunk (its previous contents "
                             "until written); uint8 for bytes topics.")
      .def_property_readonly("data", &Loan::data, "Writable memoryview of the chunk.")
      .def("__setitem__", &Loan::set_item,
           "Writes one field, checked: a string or sequence past its bound raises ferry.Error "
           "naming the field.")
      .def("__getitem__", &Loan::item,
           "A field: strings as str; arrays and sequences (their used length) as writable "
           "numpy views.")
      .def("publish", &Loan::publish)
      .def("discard", &Loan::discard)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](Loan& self, py::args) {
        if (!self.done()) self.discard();
      });

  py::class_<LoanBatch>(m, "LoanBatch",
                        "Records loaned by Publisher.loan_many(n): write them in place, then "
                        "publish() (docs/batches.md). A `with` block discards it unless published.")
      .def_property_readonly("array", &LoanBatch::array,
                             "The records as one writable numpy structured array (samples that "
                             "fit a ring slot); pooled samples raise: use record(i).")
      .def("record", &LoanBatch::record, py::arg("i"), "Record i as a writable numpy view.")
      .def("__len__", &LoanBatch::size)
      .def("shrink", &LoanBatch::shrink, py::arg("n"),
           "Keeps the first n records; the others go back.")
      .def("publish", &LoanBatch::publish,
           "Publishes the records in order, as publish_many; counts are samples x queues.")
      .def("discard", &LoanBatch::discard)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](LoanBatch& self, py::args) {
        if (!self.done()) self.discard();
      });

  py::class_<Publisher>(m, "Publisher")
      .def("publish", &Publisher::publish, py::arg("sample"),
           "Publishes a dict (missing fields zero), a numpy record of the topic's dtype, or bytes "
           "(bytes topics). A bad value raises ferry.Error before anything is sent.")
      .def("publish_many", &Publisher::publish_many, py::arg("records"),
           "Publishes a numpy array of records of the topic's dtype, in order, with one index "
           "store per queue; counts are samples x queues.")
      .def("loan", &Publisher::loan, py::arg("size") = py::none())
      .def("loan_many", &Publisher::loan_many, py::arg("n"),
           "n records to write in place (a LoanBatch), published together; one batch at a "
           "time per publisher.")
      .def_property_readonly("subscriber_count", &Publisher::subscriber_count)
      .def("wait_for_subscribers", &Publisher::wait_for_subscribers, py::arg("n"),
           py::arg("timeout"),
           "Waits (GIL released) until at least n subscribers are attached or `timeout` seconds "
           "passed; True when they are. For start-up, before the first publish.")
      .def_property_readonly("topic", [](const Publisher& p) { return p.schema().topic; })
      .def_property_readonly("type_name", [](const Publisher& p) { return p.schema().type_name; })
      .def_property_readonly("dtype", [](const Publisher& p) { return p.schema().dtype; });

  py::class_<Subscriber>(m, "Subscriber")
      .def("take", &Subscriber::take, py::arg("timeout") = py::none(),
           "The next sample, or None when none came. Waits up to `timeout` seconds (with the "
           "GIL released); never blocks without one. Raises ferry.Error when it cannot take: "
           "max_held samples are held, the node was declared dead, or the node belongs to the "
           "process this one was forked from.")
      .def("take_many", &Subscriber::take_many, py::arg("n"), py::arg("timeout") = py::none(),
           "Up to n samples as a numpy structured array (a copy, possibly shorter, empty when "
           "nothing came). Waits up to `timeout` seconds for the first only (GIL released).")
      .def_property_readonly("publisher_count", &Subscriber::publisher_count)
      .def_property_readonly("topic", [](const Subscriber& s) { return s.schema().topic; })
      .def_property_readonly("type_name", [](const Subscriber& s) { return s.schema().type_name; })
      .def_property_readonly("dtype", [](const Subscriber& s) { return s.schema().dtype; });

  py::class_<Node>(m, "Node",
                   "A participant in a domain (domain: else $FERRY_DOMAIN, else default).")
      .def(py::init<std::string, std::optional<std::string>>(), py::arg("name"), py::kw_only(),
           py::arg("domain") = py::none())
      .def("publisher", &Node::publisher, py::arg("topic"))
      .def("subscriber", &Node::subscriber, py::arg("topic"))
      .def("client", &Node::client, py::arg("service"))
      .def("server", &Node::server, py::arg("service"))
      .def_property_readonly("name", &Node::name)
      .def_property_readonly("domain", &Node::domain);

  py::class_<Client>(m, "Client", "Calls a service (docs/services.md).")
      .def("call", &Client::call, py::arg("request"), py::kw_only(),
           py::arg("timeout") = py::none(),
           "Sends `request` (a dict) and returns the response as a dict, waiting up to `timeout` "
           "seconds (default 1; GIL released); ferry.Error names NoServer, Timeout, ServerGone, "
           "TooManyPending or NoResponse.")
      .def(
          "send",
          [](py::object self, py::handle request) {
            auto sent = self.cast<Client&>().send(request);
            return Pending(std::move(self), sent);
          },
          py::arg("request"),
          "Sends `request` (a dict) without waiting; the Pending's take() or try_take() gives "
          "the response. ferry.Error names NoServer or TooManyPending.")
      .def("wait_for_server", &Client::wait_for_server, py::arg("timeout") = py::none())
      .def_property_readonly("has_server", &Client::has_server)
      .def_property_readonly("service", &Client::service);

  py::class_<Pending>(m, "Pending",
                      "A call sent with Client.send(). Dropped untaken, its response is dropped "
                      "when it comes.")
      .def("take", &Pending::take, py::arg("timeout") = py::none(),
           "The response as a dict, waiting up to `timeout` seconds (default 1; GIL released); "
           "ferry.Error names Timeout, ServerGone or NoResponse. Once per call.")
      .def("try_take", &Pending::try_take,
           "The response as a dict, or None when it has not come yet; never waits.")
      .def_property_readonly("sequence", &Pending::sequence);

  py::class_<Request>(m, "Request",
                      "A request a Server took: fields by name; respond(dict) once. Garbage "
                      "collected unanswered, it answers NoResponse.")
      .def("__getitem__", &Request::item, py::arg("field"))
      .def("to_dict", &Request::to_dict)
      .def_property_readonly("info", &Request::info)
      .def_property_readonly("answered", &Request::answered)
      .def("respond", &Request::respond, py::arg("response"));

  py::class_<Server>(m, "Server", "The one server of a service (docs/services.md).")
      .def("take_request", &Server::take_request, py::arg("timeout") = py::none(),
           "The next request, or None when none came within `timeout` seconds (GIL released).")
      .def_property_readonly("service", &Server::service);

  py::class_<WaitSet>(m, "WaitSet", "Waits on up to 64 subscribers, servers and clients at once.")
      .def(py::init<>())
      .def("attach", &WaitSet::attach, py::arg("port"),
           "Attaches a Subscriber, a Server (ready while a request waits) or a Client (ready "
           "while a response does).")
      .def("detach", &WaitSet::detach, py::arg("port"))
      .def("wait", &WaitSet::wait, py::arg("timeout") = py::none(),
           "The attached ports that are ready; empty after `timeout` seconds. Releases the GIL.")
      .def("notify", &WaitSet::notify);
}

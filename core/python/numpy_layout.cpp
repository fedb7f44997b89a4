#include "numpy_layout.hpp"

#include <fmt/format.h>

#include <string>

namespace ferry::python {

namespace py = pybind11;

namespace {

const char* scalar_format(config::Scalar scalar) {
  switch (scalar) {
    case config::Scalar::Bool:
      return "?";
    case config::Scalar::I8:
      return "i1";
    case config::Scalar::I16:
      return "i2";
    case config::Scalar::I32:
      return "i4";
    case config::Scalar::I64:
      return "i8";
    case config::Scalar::U8:
      return "u1";
    case config::Scalar::U16:
      return "u2";
    case config::Scalar::U32:
      return "u4";
    case config::Scalar::U64:
      return "u8";
    case config::Scalar::F32:
      return "f4";
    case config::Scalar::F64:
      return "f8";
  }
  return "u1";
}

py::object numpy_dtype(py::object spec, bool align = false) {
  static const py::handle dtype = numpy_attr("dtype");
  return dtype(spec, py::arg("align") = align);
}

// string<=N and T[<=N]: a record of the length ("size") and the storage
// ("data", all N elements), as ferry::String and ferry::Vector lay them out.
py::object bounded_format(py::object element, const config::Field& f) {
  py::dict spec;
  spec["names"] = py::make_tuple("size", "data");
  spec["formats"] = py::make_tuple(scalar_dtype(config::Scalar::U32), std::move(element));
  spec["offsets"] = py::make_tuple(0, f.data_offset);
  spec["itemsize"] = f.size;
  return numpy_dtype(spec, true);
}

py::object field_format(const config::Schema& schema, const config::Field& f) {
  py::object element;
  switch (f.kind) {
    case config::FieldKind::String:
      return numpy_dtype(py::str(fmt::format("S{}", f.count)));
    case config::FieldKind::BoundedString:
      return bounded_format(numpy_dtype(py::str(fmt::format("S{}", f.count))), f);
    case config::FieldKind::Scalar:
      element = scalar_dtype(f.scalar);
      break;
    case config::FieldKind::Nested:
      element = make_dtype(schema, schema.type(f.nested));
      break;
  }
  if (!f.is_array && !f.sequence) return element;
  py::object array = numpy_dtype(py::make_tuple(element, py::make_tuple(f.count)));
  if (f.sequence) return bounded_format(std::move(array), f);
  return array;
}

}  // namespace

py::handle numpy_attr(const char* name) {
  py::object numpy = py::module_::import("numpy");
  if (name == nullptr) return numpy.release();
  return py::object(numpy.attr(name)).release();
}

py::object scalar_dtype(config::Scalar scalar) {
  return numpy_dtype(py::str(scalar_format(scalar)));
}

py::object make_dtype(const config::Schema& schema, const config::Type& type) {
  py::list names;
  py::list formats;
  py::list offsets;
  for (const config::Field& f : type.fields) {
    names.append(f.name);
    formats.append(field_format(schema, f));
    offsets.append(f.offset);
  }
  py::dict spec;
  spec["names"] = names;
  spec["formats"] = formats;
  spec["offsets"] = offsets;
  spec["itemsize"] = type.size;
  return numpy_dtype(spec, true);
}

}  // namespace ferry::python

#include "sample_values.hpp"

#include <fmt/format.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>
#include <type_traits>

#include "ferry/error.hpp"
#include "numpy_layout.hpp"

namespace ferry::python {

namespace py = pybind11;
using config::Field;
using config::FieldKind;
using config::Scalar;

namespace {

template <class T>
T load(const std::byte* at) {
  T value;
  std::memcpy(&value, at, sizeof value);
  return value;
}

template <class T>
void store(std::byte* at, T value) {
  std::memcpy(at, &value, sizeof value);
}

// Calls f(T{}) with the C++ type T that holds a `scalar` (bool for Bool,
// which is one byte, 0 or 1, in a sample).
template <class F>
decltype(auto) with_scalar_type(Scalar scalar, F&& f) {
  switch (scalar) {
    case Scalar::Bool:
      return f(bool{});
    case Scalar::I8:
      return f(std::int8_t{});
    case Scalar::I16:
      return f(std::int16_t{});
    case Scalar::I32:
      return f(std::int32_t{});
    case Scalar::I64:
      return f(std::int64_t{});
    case Scalar::U8:
      return f(std::uint8_t{});
    case Scalar::U16:
      return f(std::uint16_t{});
    case Scalar::U32:
      return f(std::uint32_t{});
    case Scalar::U64:
      return f(std::uint64_t{});
    case Scalar::F32:
      return f(float{});
    case Scalar::F64:
      break;
  }
  return f(double{});
}

py::object scalar_value(Scalar scalar, const std::byte* at) {
  return with_scalar_type(scalar, [at]<class T>(T) -> py::object {
    if constexpr (std::is_same_v<T, bool>) {
      return py::bool_(load<std::uint8_t>(at) != 0);
    } else if constexpr (std::is_floating_point_v<T>) {
      return py::float_(load<T>(at));
    } else {
      return py::int_(load<T>(at));
    }
  });
}

py::str string_value(const std::byte* at, std::size_t capacity) {
  const char* chars = reinterpret_cast<const char*>(at);
  const std::size_t length = strnlen(chars, capacity);
  PyObject* text = PyUnicode_DecodeUTF8(chars, static_cast<Py_ssize_t>(length), "replace");
  if (text == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(text);
}

py::object element_value(const config::Schema& schema, const Field& f, const std::byte* at) {
  if (f.kind == FieldKind::Nested) return struct_value(schema, schema.type(f.nested), at);
  return scalar_value(f.scalar, at);
}

// --- encoding ---

std::string type_of(py::handle value) { return Py_TYPE(value.ptr())->tp_name; }

[[noreturn]] void field_error(const std::string& path, const std::string& what) {
  throw Error(fmt::format("field '{}': {}", path, what));
}

bool is_bool(py::handle value) {
  if (PyBool_Check(value.ptr())) return true;
  static const py::handle numpy_bool = numpy_attr("bool_");
  return py::isinstance(value, numpy_bool);
}

template <class T>
void store_integer(std::byte* at, py::handle value, Scalar scalar, const std::string& path) {
  // __index__: Python and numpy integers, not floats or strings.
  PyObject* index = is_bool(value) ? nullptr : PyNumber_Index(value.ptr());
  if (index == nullptr) {
    PyErr_Clear();
    field_error(path, fmt::format("expected an integer ({}), got {}", config::to_string(scalar),
                                  type_of(value)));
  }
  const auto number = py::reinterpret_steal<py::int_>(index);
  int overflow = 0;
  const long long as_signed = PyLong_AsLongLongAndOverflow(number.ptr(), &overflow);
  bool in_range = false;
  if constexpr (std::is_signed_v<T>) {
    in_range = overflow == 0 && as_signed >= std::numeric_limits<T>::min() &&
               as_signed <= std::numeric_limits<T>::max();
    if (in_range) store(at, static_cast<T>(as_signed));
  } else {
    const unsigned long long as_unsigned = PyLong_AsUnsignedLongLong(number.ptr());
    if (as_unsigned == static_cast<unsigned long long>(-1) && PyErr_Occurred() != nullptr) {
      PyErr_Clear();
    } else {
      in_range = as_unsigned <= std::numeric_limits<T>::max();
      if (in_range) store(at, static_cast<T>(as_unsigned));
    }
  }
  if (!in_range) {
    field_error(path, fmt::format("{} is out of range for {} ({} to {})",
                                  py::str(py::handle(number)).cast<std::string>(),
                                  config::to_string(scalar), +std::numeric_limits<T>::min(),
                                  +std::numeric_limits<T>::max()));
  }
}

void store_float(std::byte* at, py::handle value, Scalar scalar, const std::string& path) {
  const bool number = !is_bool(value) && !PyUnicode_Check(value.ptr()) &&
                      !PyBytes_Check(value.ptr()) && PyNumber_Check(value.ptr()) != 0;
  const double d = number ? PyFloat_AsDouble(value.ptr()) : 0.0;
  if (!number || (d == -1.0 && PyErr_Occurred() != nullptr)) {
    PyErr_Clear();
    field_error(path, fmt::format("expected a number ({}), got {}", config::to_string(scalar),
                                  type_of(value)));
  }
  if (scalar == Scalar::F64) {
    store(at, d);
    return;
  }
  if (std::isfinite(d) && std::fabs(d) > FLT_MAX) {
    field_error(path, fmt::format("{} is out of range for f32 (largest {})", d, FLT_MAX));
  }
  store(at, static_cast<float>(d));
}

void store_scalar(std::byte* at, py::handle value, Scalar scalar, const std::string& path) {
  with_scalar_type(scalar, [&]<class T>(T) {
    if constexpr (std::is_same_v<T, bool>) {
      if (!is_bool(value))
        field_error(path, fmt::format("expected a bool, got {}", type_of(value)));
      store<std::uint8_t>(at, PyObject_IsTrue(value.ptr()) == 1 ? 1 : 0);
    } else if constexpr (std::is_floating_point_v<T>) {
      store_float(at, value, scalar, path);
    } else {
      store_integer<T>(at, value, scalar, path);
    }
  });
}

// The text of a str (its UTF-8, kept in `utf8`) or of a bytes object, for
// a string field.
std::string_view text_of(py::handle value, std::string& utf8, const Field& f,
                         const std::string& path) {
  if (PyUnicode_Check(value.ptr())) {
    utf8 = value.cast<std::string>();
    return utf8;
  }
  if (PyBytes_Check(value.ptr())) {
    return {PyBytes_AS_STRING(value.ptr()),
            static_cast<std::size_t>(PyBytes_GET_SIZE(value.ptr()))};
  }
  field_error(path, fmt::format("expected a str ({}), got {}", f.type_text, type_of(value)));
}

void store_string(std::byte* at, py::handle value, const Field& f, const std::string& path) {
  std::string utf8;
  const std::string_view text = text_of(value, utf8, f, path);
  if (text.size() >= f.count) {
    field_error(path, fmt::format("a string of {} bytes does not fit {} (at most {} and the NUL)",
                                  text.size(), f.type_text, f.count - 1));
  }
  std::memcpy(at, text.data(), text.size());
}

// A numpy array for a scalar T[N]: converted as a whole (no Python loop),
// after checking that no element changes on the way.
void store_scalar_array(std::byte* at, py::handle value, const Field& f, const std::string& path) {
  static const py::handle numpy = numpy_attr(nullptr);
  py::object array = numpy.attr("asarray")(value);
  const auto size = array.attr("size").cast<std::uint64_t>();
  if (size > f.count) {
    field_error(path, fmt::format("an array of {} elements does not fit {}", size, f.type_text));
  }
  const py::object target = scalar_dtype(f.scalar);
  const auto kind = array.attr("dtype").attr("kind").cast<std::string>();
  const auto want = target.attr("kind").cast<std::string>();
  const bool integer = kind == "i" || kind == "u";
  bool fits = false;
  if (want == "b") {
    fits = kind == "b";
  } else if (want == "f") {
    fits = integer || kind == "f";
    if (fits && f.scalar == Scalar::F32 && kind == "f" && size > 0) {
      const py::object finite = array[numpy.attr("isfinite")(array)];
      fits = finite.attr("size").cast<std::size_t>() == 0 ||
             numpy.attr("abs")(finite).attr("max")().cast<double>() <= FLT_MAX;
    }
  } else if (integer) {
    const py::object info = numpy.attr("iinfo")(target);
    fits = size == 0 || (py::int_(array.attr("min")()) >= info.attr("min") &&
                         py::int_(array.attr("max")()) <= info.attr("max"));
  }
  if (!fits) {
    field_error(path, fmt::format("an array of {} cannot be stored as {} without changing values",
                                  py::str(array.attr("dtype")).cast<std::string>(), f.type_text));
  }
  const py::object converted =
      numpy.attr("ascontiguousarray")(array.attr("reshape")(-1), py::arg("dtype") = target);
  const py::buffer_info buffer = py::reinterpret_borrow<py::buffer>(converted).request();
  std::memcpy(at, buffer.ptr, static_cast<std::size_t>(size * f.element_size));
}

// string<=N: the UTF-8 bytes and their length; more than N is an error
// (never truncated).
void store_bounded_string(std::byte* at, py::handle value, const Field& f,
                          const std::string& path) {
  std::string utf8;
  const std::string_view text = text_of(value, utf8, f, path);
  if (text.size() > f.count) {
    field_error(path, fmt::format("a string of {} bytes does not fit {} (at most {} bytes)",
                                  text.size(), f.type_text, f.count));
  }
  store(at, static_cast<std::uint32_t>(text.size()));
  if (!text.empty()) std::memcpy(at + f.data_offset, text.data(), text.size());
}

// The number of elements `value` (a list, tuple or numpy array) has.
std::uint64_t length_of(py::handle value) {
  static const py::handle ndarray = numpy_attr("ndarray");
  if (py::isinstance(value, ndarray)) return value.attr("size").cast<std::uint64_t>();
  if (PyList_Check(value.ptr()) || PyTuple_Check(value.ptr()) || PyBytes_Check(value.ptr()))
    return static_cast<std::uint64_t>(PyObject_Length(value.ptr()));
  return 0;
}

}  // namespace

void store_field(std::byte* at, py::handle value, const config::Schema& schema, const Field& f,
                 const std::string& path) {
  if (f.kind == FieldKind::String) return store_string(at, value, f, path);
  if (f.kind == FieldKind::BoundedString) return store_bounded_string(at, value, f, path);
  if (f.sequence) {
    // T[<=N]: the elements as for T[N] after the length; more than N is an
    // error naming the field (never truncated).
    static const py::handle ndarray = numpy_attr("ndarray");
    const bool listlike =
        PyList_Check(value.ptr()) || PyTuple_Check(value.ptr()) || py::isinstance(value, ndarray);
    if (!listlike) {
      field_error(path, fmt::format("expected a list or numpy array for {}, got {}", f.type_text,
                                    type_of(value)));
    }
    const std::uint64_t n = length_of(value);
    if (n > f.count) {
      field_error(path,
                  fmt::format("{} elements do not fit {} (at most {})", n, f.type_text, f.count));
    }
    Field array = f;
    array.sequence = false;
    array.is_array = true;
    store_field(at + f.data_offset, value, schema, array, path);
    store(at, static_cast<std::uint32_t>(n));
    return;
  }
  if (!f.is_array) {
    if (f.kind == FieldKind::Nested)
      return encode_struct(schema, schema.type(f.nested), value, at, path);
    return store_scalar(at, value, f.scalar, path);
  }
  static const py::handle ndarray = numpy_attr("ndarray");
  if (f.kind == FieldKind::Scalar && py::isinstance(value, ndarray)) {
    return store_scalar_array(at, value, f, path);
  }
  if (!PyList_Check(value.ptr()) && !PyTuple_Check(value.ptr())) {
    field_error(path, fmt::format("expected a list for {}, got {}", f.type_text, type_of(value)));
  }
  const py::sequence items = py::reinterpret_borrow<py::sequence>(value);
  if (items.size() > f.count) {
    field_error(path,
                fmt::format("a list of {} elements does not fit {}", items.size(), f.type_text));
  }
  for (std::size_t i = 0; i < items.size(); ++i) {
    const Field element = [&] {
      Field e = f;
      e.is_array = false;
      return e;
    }();
    store_field(at + i * f.element_size, items[i], schema, element, fmt::format("{}[{}]", path, i));
  }
}

std::uint64_t used_length(const Field& f, const std::byte* at) {
  return std::min<std::uint64_t>(load<std::uint32_t>(at), f.count);  // shared memory: not trusted
}

py::object field_value(const config::Schema& schema, const Field& f, const std::byte* base) {
  const std::byte* at = base + f.offset;
  if (f.kind == FieldKind::String) return string_value(at, f.count);
  if (f.kind == FieldKind::BoundedString) {
    const auto n = used_length(f, at);
    PyObject* text = PyUnicode_DecodeUTF8(reinterpret_cast<const char*>(at + f.data_offset),
                                          static_cast<Py_ssize_t>(n), "replace");
    if (text == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::str>(text);
  }
  std::uint64_t count = f.count;
  if (f.sequence) {
    count = used_length(f, at);
    at += f.data_offset;
  } else if (!f.is_array) {
    return element_value(schema, f, at);
  }
  py::list items(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    items[i] = element_value(schema, f, at + i * f.element_size);
  }
  return items;
}

py::dict struct_value(const config::Schema& schema, const config::Type& type,
                      const std::byte* base) {
  py::dict out;
  for (const Field& f : type.fields) out[py::str(f.name)] = field_value(schema, f, base);
  return out;
}

void encode_struct(const config::Schema& schema, const config::Type& type, py::handle value,
                   std::byte* out, const std::string& path) {
  if (!PyDict_Check(value.ptr())) {
    const std::string what =
        fmt::format("expected a dict for type {}, got {}", type.name, type_of(value));
    if (path.empty()) throw Error(what);
    field_error(path, what);
  }
  for (const auto& [key, item] : py::reinterpret_borrow<py::dict>(value)) {
    const std::string name = py::str(key).cast<std::string>();
    const std::string field_path = path.empty() ? name : path + "." + name;
    const Field* field = nullptr;
    for (const Field& f : type.fields) {
      if (f.name == name) field = &f;
    }
    if (field == nullptr) {
      std::string names;
      for (const Field& f : type.fields) names += (names.empty() ? "" : ", ") + f.name;
      field_error(field_path,
                  fmt::format("type {} has no such field (its fields: {})", type.name, names));
    }
    store_field(out + field->offset, item, schema, *field, field_path);
  }
}

}  // namespace ferry::python

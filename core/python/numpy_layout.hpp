#pragma once
// Schema types as numpy structured dtypes with the C layout: every field at
// its C offset, the struct's size and alignment (align=True), nested types
// as nested dtypes, T[N] as subarrays, char[N] as S<N>.

#include <pybind11/pybind11.h>

#include "ferry/config/schema.hpp"

namespace ferry::python {

[[nodiscard]] pybind11::object make_dtype(const config::Schema& schema, const config::Type& type);

// numpy's attribute `name` (numpy itself for nullptr), looked up once per
// call site by the callers' statics. The reference is kept for good: a
// static py::object would be released after the interpreter is gone.
[[nodiscard]] pybind11::handle numpy_attr(const char* name);

// The numpy dtype of one scalar, e.g. "<u4".
[[nodiscard]] pybind11::object scalar_dtype(config::Scalar scalar);

}  // namespace ferry::python

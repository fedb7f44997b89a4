// <ferry/ferry.h> compiled as C++11 alone, with -pedantic: its extern "C"
// guards and its typedefs are valid C++ too.
#include <ferry/ferry.h>

const char* header_compiles_as_cxx();
const char* header_compiles_as_cxx() { return ferry_error_name(FERRY_OK); }

/* <ferry/ferry.h> compiled as C11 alone, with -pedantic: it needs nothing
   else and declares every name (a C program that only includes it). */
#include <ferry/ferry.h>

const char* header_compiles_as_c(void);
const char* header_compiles_as_c(void) { return ferry_error_name(FERRY_OK); }

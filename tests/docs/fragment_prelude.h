/* What a C fragment of the documentation (<!-- check: fragment -->) finds in
 * scope: the C API and the documentation's Pose type. Each fragment becomes
 * the body of a function (scripts/doc-snippets.py); it is compiled and
 * linked against ferry::ferry_c, never run. */
#ifndef FERRY_DOC_FRAGMENT_PRELUDE_H
#define FERRY_DOC_FRAGMENT_PRELUDE_H

#include <ferry/ferry.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  uint64_t stamp_ns;
  double x, y;
  char frame[16];
} Pose;

#define FERRY_DOC_FRAGMENT_PARAMETERS void
#define FERRY_DOC_FRAGMENT_BEGIN
#define FERRY_DOC_FRAGMENT_END

#endif

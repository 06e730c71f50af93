/* The implementation, compiled once per build for the tests that use only the public API:
 * they include attn.h for its declarations and link this unit, as most programs take the
 * library (one file defines ATTN_IMPLEMENTATION). The tests that reach the internals or the
 * tunables compile the implementation themselves. */
#define ATTN_IMPLEMENTATION
#include "attn.h"

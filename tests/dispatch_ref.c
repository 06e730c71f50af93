/* dispatch_ref.c - dispatch_ops.h in a build of one instruction set (compiled once per
 * path with its flags, the implementation private to this unit): REF_FN(out), and its
 * workspace sizes REF_WS(ws). */
#define ATTN_STATIC
#define ATTN_IMPLEMENTATION
#include "attn.h"
#include "dispatch_ops.h"

size_t REF_FN(float *out);
size_t REF_FN(float *out) { return dispatch_ops(out); }
size_t REF_WS(size_t *ws);
size_t REF_WS(size_t *ws) { return dispatch_ws(ws); }

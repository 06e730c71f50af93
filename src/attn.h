/* src/attn.h - the root of the sources: tools/amalgamate.py expands its includes, in this
 * order, into the single attn.h that users copy. Compiled as it is by the text-size check
 * (tools/textsize.py), so that each function is charged to its own file. */
#include "api.h"

#if defined(ATTN_IMPLEMENTATION) && !defined(ATTN_IMPLEMENTATION_DONE)
#define ATTN_IMPLEMENTATION_DONE
#include "base.h"
#include "config.h"
#include "exp.h"
#include "convert.h"
#include "softmax.h"
#include "norm.h"
#include "elementwise.h"
#include "matmul.h"
#include "attention.h"
#include "kv_cache.h"
#include "rope.h"
#include "activation.h"
#include "blocks.h"
#include "decoder_only.h"
#include "fpenv.h"
#endif /* ATTN_IMPLEMENTATION */

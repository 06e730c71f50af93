/* torch_records.h - the data files tests/torch/gen_*.py write, read by the tests that
 * compare with PyTorch. Little-endian records: a 48-byte NUL-padded name, u32 type (0 f32,
 * 1 f16), u32 count, then count elements. Include after check.h. */
#ifndef ATTN_TEST_TORCH_RECORDS_H
#define ATTN_TEST_TORCH_RECORDS_H
#include <stdint.h>

#define TORCH_MAXREC 128

typedef struct rec {
    char name[49];
    uint32_t type, count;
    void *data;
} rec;

static rec recs[TORCH_MAXREC];
static size_t nrecs;

static uint32_t torch__u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Loads every record of the file; 0 when it cannot be read or holds none. */
static int load(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    while (nrecs < TORCH_MAXREC) {
        rec *r = &recs[nrecs];
        unsigned char hdr[8];
        size_t es;
        memset(r->name, 0, sizeof r->name);
        if (fread(r->name, 1, 48, f) != 48 || fread(hdr, 1, 8, f) != 8) break;
        r->type = torch__u32(hdr), r->count = torch__u32(hdr + 4);
        es = r->type ? 2 : 4;
        r->data = malloc(r->count * es + 1);
        if (!r->data || fread(r->data, es, r->count, f) != r->count) break;
        nrecs++;
    }
    fclose(f);
    return nrecs > 0;
}

/* The record `name` (a missing one ends the test `test`). */
static const rec *find_in(const char *name, const char *test)
{
    size_t i;
    for (i = 0; i < nrecs; i++)
        if (strcmp(recs[i].name, name) == 0) return &recs[i];
    check(0, "record %s missing from the data", name);
    exit(check_end(test));
}

static void free_records(void)
{
    while (nrecs) free(recs[--nrecs].data);
}
#endif

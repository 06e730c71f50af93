/* driver.c - runs inputs through LLVMFuzzerTestOneInput without libFuzzer, so that any
 * compiler (gcc too) replays the committed corpora in the ordinary test suite.
 * Usage: fuzz_driver FILE_OR_DIR... (every regular file of a directory, one input each).
 * A failed check aborts (the test fails); otherwise prints how many inputs ran. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static long runs;

static void run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    unsigned char *data;
    long n;
    if (!f) {
        fprintf(stderr, "fuzz_driver: cannot open %s\n", path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    data = (unsigned char *)malloc((size_t)n + 1);
    if (!data || fread(data, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "fuzz_driver: cannot read %s\n", path);
        exit(2);
    }
    fclose(f);
    LLVMFuzzerTestOneInput(data, (size_t)n);
    free(data);
    runs++;
}

static void run_path(const char *path)
{
    struct stat st;
    DIR *d;
    struct dirent *e;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "fuzz_driver: no such file or directory: %s\n", path);
        exit(2);
    }
    if (!S_ISDIR(st.st_mode)) {
        run_file(path);
        return;
    }
    if (!(d = opendir(path))) {
        fprintf(stderr, "fuzz_driver: cannot open %s\n", path);
        exit(2);
    }
    while ((e = readdir(d)) != NULL) {
        char *full;
        if (e->d_name[0] == '.') continue;
        full = (char *)malloc(strlen(path) + strlen(e->d_name) + 2);
        if (!full) exit(2);
        sprintf(full, "%s/%s", path, e->d_name);
        if (stat(full, &st) == 0 && S_ISREG(st.st_mode)) run_file(full);
        free(full);
    }
    closedir(d);
}

int main(int argc, char **argv)
{
    int i;
    for (i = 1; i < argc; i++) run_path(argv[i]);
    printf("fuzz_driver: %ld inputs, no failure\n", runs);
    return 0;
}

/* Replays inputs through a libFuzzer target without libFuzzer: each argument is a file,
 * or a directory whose regular files are fed one by one (not recursively, in name order).
 * Built together with tests/fuzz/fuzz_onnx.c under ASan+UBSan by ./build.sh test, so a
 * corpus entry that once crashed keeps being checked. A crash aborts the program; when
 * every input went through it prints "N passed, 0 failed". */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        printf("cannot open %s\n", path);
        return 0;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = (uint8_t *)malloc(cap);
    for (;;) {
        if (buf == NULL) break;
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        uint8_t *nb = (uint8_t *)realloc(buf, cap * 2);
        if (nb == NULL) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    fclose(f);
    if (buf == NULL) {
        printf("out of memory reading %s\n", path);
        return 0;
    }
    /* an exact-size copy, so ASan sees reads one past the end */
    uint8_t *exact = (uint8_t *)malloc(n ? n : 1);
    if (exact == NULL) {
        free(buf);
        return 0;
    }
    if (n) memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 1;
}

static int cmp_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_dir(const char *dir, int *failed) {
    DIR *d = opendir(dir);
    if (d == NULL) {
        printf("cannot open directory %s\n", dir);
        (*failed)++;
        return 0;
    }
    char **names = NULL;
    size_t count = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        if (count == cap) {
            cap = cap ? cap * 2 : 64;
            char **nn = (char **)realloc(names, cap * sizeof *names);
            if (nn == NULL) break;
            names = nn;
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        names[count] = (char *)malloc(len);
        if (names[count] == NULL) break;
        snprintf(names[count], len, "%s/%s", dir, e->d_name);
        count++;
    }
    closedir(d);
    if (count) qsort(names, count, sizeof *names, cmp_names);
    int done = 0;
    for (size_t i = 0; i < count; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            if (replay_file(names[i])) done++;
            else (*failed)++;
        }
        free(names[i]);
    }
    free(names);
    return done;
}

int main(int argc, char **argv) {
    int done = 0, failed = 0;
    if (argc < 2) {
        printf("usage: %s FILE|DIR...\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            done += replay_dir(argv[i], &failed);
        } else if (replay_file(argv[i])) {
            done++;
        } else {
            failed++;
        }
    }
    printf("%d passed, %d failed\n", done, failed);
    return failed ? 1 : 0;
}

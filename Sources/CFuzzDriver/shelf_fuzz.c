#include "shelf_fuzz.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

// Defined only when libFuzzer is linked (swiftc -sanitize=fuzzer); weak, so an ordinary build links.
extern int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *, size_t)) __attribute__((weak));

int shelf_fuzz_has_libfuzzer(void) { return LLVMFuzzerRunDriver != NULL; }

static int replay_file(const char *path, shelf_fuzz_callback callback) {
    FILE *file = fopen(path, "rb");
    if (!file) {
        fprintf(stderr, "shelf-fuzz: cannot read %s\n", path);
        return 1;
    }
    size_t capacity = 1 << 16, size = 0;
    uint8_t *data = malloc(capacity);
    size_t got;
    while (data && (got = fread(data + size, 1, capacity - size, file)) > 0) {
        size += got;
        if (size == capacity) {
            capacity *= 2;
            uint8_t *grown = realloc(data, capacity);
            if (!grown) {
                free(data);
                data = NULL;
            }
            data = grown;
        }
    }
    fclose(file);
    if (!data) return 1;
    callback(data, size);
    free(data);
    return 0;
}

static int compare(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static int replay(const char *path, shelf_fuzz_callback callback, int *count) {
    struct stat info;
    if (stat(path, &info) != 0) {
        fprintf(stderr, "shelf-fuzz: %s does not exist\n", path);
        return 1;
    }
    if (!S_ISDIR(info.st_mode)) {
        (*count)++;
        return replay_file(path, callback);
    }
    DIR *dir = opendir(path);
    if (!dir) return 1;
    char **names = NULL;
    size_t n = 0;
    struct dirent *entry;
    while ((entry = readdir(dir))) {
        if (entry->d_name[0] == '.') continue;
        char **grown = realloc(names, (n + 1) * sizeof(char *));
        if (!grown) break;
        names = grown;
        names[n++] = strdup(entry->d_name);
    }
    closedir(dir);
    qsort(names, n, sizeof(char *), compare);
    int status = 0;
    for (size_t i = 0; i < n; i++) {
        size_t length = strlen(path) + strlen(names[i]) + 2;
        char *child = malloc(length);
        snprintf(child, length, "%s/%s", path, names[i]);
        status |= replay(child, callback, count);
        free(child);
        free(names[i]);
    }
    free(names);
    return status;
}

int shelf_fuzz_run(int argc, char **argv, shelf_fuzz_callback callback) {
    if (LLVMFuzzerRunDriver) return LLVMFuzzerRunDriver(&argc, &argv, callback);
    int status = 0, count = 0;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-') continue;  // libFuzzer's flags mean nothing here
        status |= replay(argv[i], callback, &count);
    }
    printf("shelf-fuzz: replayed %d inputs\n", count);
    return status;
}

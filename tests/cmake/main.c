/* The CMake consumer: tinyinfer.h found through tinyinfer::tinyinfer's include path, the
 * implementation compiled here, linked with what the target brings (threads, libm, libdl).
 * Runs MODEL (argv[1]) on zeros and prints "1 passed, 0 failed" when it ran. */
#define TINYINFER_IMPLEMENTATION
#include <tinyinfer.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    ti_error err;
    ti_session *s = NULL;
    ti_model *m = argc > 1 ? ti_model_load_file(argv[1], NULL, &err) : NULL;
    if (m == NULL || (s = ti_session_create(m, NULL, &err)) == NULL ||
        ti_session_run(s, &err) != TI_OK) {
        printf("%s\n0 passed, 1 failed\n", argc > 1 ? err.message : "usage: consumer MODEL");
        ti_session_destroy(s);
        ti_model_free(m);
        return 1;
    }
    printf("%s: output '%s', %zu values (tinyinfer %s)\n", argv[1], ti_session_output(s, 0)->name,
           ti_tensor_numel(ti_session_output(s, 0)), TINYINFER_VERSION_STRING);
    printf("1 passed, 0 failed\n");
    ti_session_destroy(s);
    ti_model_free(m);
    return 0;
}

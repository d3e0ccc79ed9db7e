/* Compile check: a second translation unit that includes the header without the
 * implementation (twice) and calls the API; linked with impl.c it proves that one TU
 * defines everything and the other only declares it (also across C and C++). Exits 0 on
 * success. Prints only when something is wrong. */
#include "tinyinfer.h"
#include "tinyinfer.h"

#include <stdio.h>
#include <string.h>

int main(void) {
    int bad = 0;
    for (int c = 0; c <= (int)TI_STATUS_COUNT; c++)
        if (ti_status_string((ti_status)c) == NULL) bad++;
    if (strcmp(ti_status_string(TI_OK), "ok") != 0) bad++;
    if (ti_dtype_size(TI_DTYPE_F32) != 4 || ti_dtype_name(TI_DTYPE_F32) == NULL) bad++;
    ti_error err;
    static const unsigned char junk[] = "not a model";
    ti_model *m = ti_model_load_memory(junk, sizeof junk, NULL, &err);
    if (m != NULL || err.code == TI_OK || err.message[0] == 0) bad++;
    ti_model_free(m); /* NULL */
    ti_model_free(NULL);
    ti_session_destroy(NULL);
    if (bad) printf("user.c: %d API checks failed\n", bad);
    return bad ? 1 : 0;
}

/* tinyinfer-cache: fills the OpenCL program-binary cache for models ahead of time (at app
 * install, in a build step), so that their first session on this device builds nothing.
 *
 *     tinyinfer-cache --dir DIR [--device SEL] [--precision fp32|fp16] MODEL...
 *
 * For each model it creates an OpenCL session with the cache in DIR (which builds the
 * programs the model needs and stores them) and says how many programs were built and
 * how many were already there. fp16 sessions (desc.precision) build programs of their
 * own, so an app that uses them pre-warms with --precision fp16. Exit code 1 when a
 * model cannot use OpenCL. */
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *f) {
    fprintf(f, "usage: tinyinfer-cache --dir DIR [--device SEL] [--precision fp32|fp16] MODEL...\n"
               "builds the OpenCL programs each model needs into the cache DIR (the same\n"
               "directory sessions get in ti_session_desc.opencl_cache_dir or\n"
               "$TINYINFER_OPENCL_CACHE); --device: gpu, cpu, an index or a part of a name;\n"
               "--precision: the sessions' desc.precision (fp16 programs are their own)\n");
}

int main(int argc, char **argv) {
    const char *dir = NULL, *device = NULL;
    ti_precision precision = TI_PRECISION_FP32;
    int rc = 0, n_models = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) dir = argv[++i];
        else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) device = argv[++i];
        else if (strcmp(argv[i], "--precision") == 0 && i + 1 < argc) {
            const char *p = argv[++i];
            if (strcmp(p, "fp32") == 0) precision = TI_PRECISION_FP32;
            else if (strcmp(p, "fp16") == 0) precision = TI_PRECISION_FP16;
            else {
                fprintf(stderr, "tinyinfer-cache: --precision wants fp32 or fp16, not '%s'\n", p);
                return 2;
            }
        }
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "tinyinfer-cache: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        } else {
            n_models++;
        }
    }
    if (dir == NULL || n_models == 0) {
        usage(stderr);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dir") == 0 || strcmp(argv[i], "--device") == 0 ||
            strcmp(argv[i], "--precision") == 0) {
            i++;
            continue;
        }
        ti_error err;
        ti_model *m = ti_model_load_file(argv[i], NULL, &err);
        if (m == NULL) {
            fprintf(stderr, "tinyinfer-cache: %s\n", err.message);
            rc = 1;
            continue;
        }
        ti_session_desc d;
        memset(&d, 0, sizeof d);
        d.backend = TI_BACKEND_OPENCL;
        d.opencl_device = device;
        d.opencl_cache_dir = dir;
        d.precision = precision;
        d.num_threads = 1;
        ti_session *s = ti_session_create(m, &d, &err);
        if (s == NULL) {
            fprintf(stderr, "tinyinfer-cache: %s\n", err.message);
            rc = 1;
        } else {
            ti_session_info info;
            ti_session_get_info(s, &info);
            printf("%s: %s: %d program(s) built, %d already cached (%.1f ms); %d of %d nodes "
                   "on the device\n",
                   argv[i], info.device, info.programs_built, info.programs_cached, info.build_ms,
                   info.num_gpu_nodes, info.num_gpu_nodes + info.num_cpu_nodes);
            ti_session_destroy(s);
        }
        ti_model_free(m);
    }
    return rc;
}

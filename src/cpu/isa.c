/* Which instruction set the CPU kernels use. The best one the CPU and OS support is detected
 * once (cpu/x86/cpuid.c on x86, cpu/arm/cpuinfo.c on aarch64; scalar elsewhere and with
 * TI_NO_SIMD). The environment variable TINYINFER_ISA=scalar|avx2|avx512|avx512vnni|amx (x86)
 * or scalar|neon|neondot (aarch64), read once at first use, caps it:
 * for comparing paths, and for working around a suspected SIMD problem on a user's
 * machine. Tests call ti__cpu_force_isa(). Asking for an ISA the CPU lacks gives the best
 * one it has.
 * Sessions on many threads reach the two globals below at once. Both are atomics
 * (core/sync.c): a thread that finds one unset computes the value and stores it; threads
 * racing on first use compute the same value (detection is idempotent), so no lock is
 * needed, only atomic loads and stores. Only tests change the selection afterwards; the
 * library's other mutable global is the OpenCL context table (cl/runtime.c, behind the
 * global lock). Must not allocate or print. */

static ti__atomic_int ti__isa_best_g = -1; /* -1: not detected yet */
static ti__atomic_int ti__isa_cur_g = -1;  /* -1: not chosen yet (TINYINFER_ISA not read) */

TI__PRIVATE int ti__cpu_isa_best(void) {
    int best = ti__atomic_load(&ti__isa_best_g);
    if (best < 0) {
#if defined(TI__X86_SIMD)
        best = ti__x86_detect();
#elif defined(TI__ARM_NEON)
        best = ti__arm_detect();
#else
        best = TI__ISA_SCALAR; /* other CPUs and TI_NO_SIMD: the portable kernels */
#endif
        ti__atomic_store(&ti__isa_best_g, best);
    }
    return best;
}

#if defined(TI__X86_SIMD) && defined(TI__X86_VNNI)
static ti__atomic_int ti__vbmi_g = -1; /* -1: not asked yet */

/* Whether kernels may use AVX512-VBMI: the ISA in effect is AVX512VNNI (so TINYINFER_ISA and
 * ti__cpu_force_isa lower it too) and cpuid has it (asked once: cpuid traps in some VMs). */
TI__PRIVATE int ti__cpu_vbmi(void) {
    int v = ti__atomic_load(&ti__vbmi_g);
    if (v < 0) {
        v = ti__cpu_isa_best() >= TI__ISA_AVX512VNNI && ti__x86_vbmi();
        ti__atomic_store(&ti__vbmi_g, v);
    }
    return v && ti__cpu_isa() >= TI__ISA_AVX512VNNI;
}
#endif

TI__PRIVATE const char *ti__cpu_isa_name(int isa) {
#ifdef TI__ARM_NEON
    switch (isa) {
    case TI__ISA_NEON: return "neon";
    case TI__ISA_NEONDOT: return "neondot";
    case TI__ISA_SCALAR: return "scalar";
    default: return "none"; /* no such level on this CPU family */
    }
#endif
    switch (isa) {
    case TI__ISA_AVX2: return "avx2";
    case TI__ISA_AVX512: return "avx512";
    case TI__ISA_AVX512VNNI: return "avx512vnni";
    case TI__ISA_AMX: return "amx";
    default: return "scalar";
    }
}

/* The ISA asked for by TINYINFER_ISA, or -1 when unset or unknown (then: the best). */
TI__PRIVATE int ti__isa_from_env(void) {
    const char *v = getenv("TINYINFER_ISA");
    if (v == NULL) return -1;
    for (int isa = TI__ISA_SCALAR; isa <= TI__ISA_LAST; isa++)
        if (strcmp(v, ti__cpu_isa_name(isa)) == 0) return isa;
    return -1;
}

/* Test hook: isa is a TI__ISA_* value (capped at the best available), or -1 to go back to
 * TINYINFER_ISA or the best. Returns the ISA now in effect. */
TI__PRIVATE int ti__cpu_force_isa(int isa) {
    int best = ti__cpu_isa_best();
    if (isa < 0) isa = ti__isa_from_env();
    if (isa < 0 || isa > best) isa = best;
    ti__atomic_store(&ti__isa_cur_g, isa);
    return isa;
}

TI__PRIVATE int ti__cpu_isa(void) {
    int isa = ti__atomic_load(&ti__isa_cur_g);
    return isa >= 0 ? isa : ti__cpu_force_isa(-1);
}

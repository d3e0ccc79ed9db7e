/* float32 Add, Sub, Mul and Div runs of the broadcast binary ops (cpu/binary.c,
 * ti__bin_f32) in AVX-512F and AVX2: o[i] = a op b over n outputs, each input either a
 * contiguous run or one value repeated (the per-channel scale of a squeeze-excitation Mul).
 * gcc -O2 leaves the portable loops scalar (it would have to version them for aliasing),
 * and with many channel runs they were 4-5% of MobileNetV3 and EfficientNet-B0 (perf).
 * Each lane is the IEEE operation the scalar loop does, so the results are the same bits.
 * Compiled with function-level target attributes, run only when cpuid allows. Must not
 * allocate. */
#ifdef TI__X86_SIMD
#include <immintrin.h>

/* x op y (op is a constant once inlined): 0 add, 1 sub, 2 mul, 3 div. */
TI__X86_INLINE TI__TARGET_AVX512 __m512 ti__bop512(const int op, __m512 x, __m512 y) {
    switch (op) {
    case 0: return _mm512_add_ps(x, y);
    case 1: return _mm512_sub_ps(x, y);
    case 2: return _mm512_mul_ps(x, y);
    default: return _mm512_div_ps(x, y);
    }
}

/* o[0:n] = a op b; sa / sb: 1 when a / b is a run of n floats, 0 when it is one value. */
TI__X86_INLINE TI__TARGET_AVX512 void ti__bin_run512(const int op, const float *a, int sa,
                                                     const float *b, int sb, float *o,
                                                     size_t n) {
    const __m512 va = _mm512_set1_ps(a[0]), vb = _mm512_set1_ps(b[0]);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 x = sa ? _mm512_loadu_ps(a + i) : va, y = sb ? _mm512_loadu_ps(b + i) : vb;
        _mm512_storeu_ps(o + i, ti__bop512(op, x, y));
    }
    if (i < n) { /* masked lanes are neither read nor written */
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
        __m512 x = sa ? _mm512_maskz_loadu_ps(m, a + i) : va;
        __m512 y = sb ? _mm512_maskz_loadu_ps(m, b + i) : vb;
        /* the unused lanes of a division: 0 / 1, so no flag is raised for them */
        if (op == 3) y = _mm512_mask_blend_ps(m, _mm512_set1_ps(1.0f), y);
        _mm512_mask_storeu_ps(o + i, m, ti__bop512(op, x, y));
    }
}

/* 1 when it did o[0:n] = a op b for a TI__BOP_* op, 0 (nothing done) for other ops. */
TI__PRIVATE TI__TARGET_AVX512 int ti__bin_f32_avx512(int op, const float *a, int sa,
                                                     const float *b, int sb, float *o,
                                                     size_t n) {
    switch (op) {
    case TI__BOP_ADD: case TI__BOP_SUM: case TI__BOP_MEAN:
        ti__bin_run512(0, a, sa, b, sb, o, n);
        return 1;
    case TI__BOP_SUB: ti__bin_run512(1, a, sa, b, sb, o, n); return 1;
    case TI__BOP_MUL: ti__bin_run512(2, a, sa, b, sb, o, n); return 1;
    case TI__BOP_DIV: ti__bin_run512(3, a, sa, b, sb, o, n); return 1;
    default: return 0;
    }
}

TI__X86_INLINE TI__TARGET_AVX2 __m256 ti__bop256(const int op, __m256 x, __m256 y) {
    switch (op) {
    case 0: return _mm256_add_ps(x, y);
    case 1: return _mm256_sub_ps(x, y);
    case 2: return _mm256_mul_ps(x, y);
    default: return _mm256_div_ps(x, y);
    }
}

/* As ti__bin_run512, 8 lanes; the last n % 8 in scalar code (the same IEEE operations). */
TI__X86_INLINE TI__TARGET_AVX2 void ti__bin_run256(const int op, const float *a, int sa,
                                                   const float *b, int sb, float *o, size_t n) {
    const __m256 va = _mm256_set1_ps(a[0]), vb = _mm256_set1_ps(b[0]);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 x = sa ? _mm256_loadu_ps(a + i) : va, y = sb ? _mm256_loadu_ps(b + i) : vb;
        _mm256_storeu_ps(o + i, ti__bop256(op, x, y));
    }
    for (; i < n; i++) {
        float x = a[sa ? i : 0], y = b[sb ? i : 0];
        o[i] = op == 0 ? x + y : op == 1 ? x - y : op == 2 ? x * y : x / y;
    }
}

TI__PRIVATE TI__TARGET_AVX2 int ti__bin_f32_avx2(int op, const float *a, int sa, const float *b,
                                                 int sb, float *o, size_t n) {
    switch (op) {
    case TI__BOP_ADD: case TI__BOP_SUM: case TI__BOP_MEAN:
        ti__bin_run256(0, a, sa, b, sb, o, n);
        return 1;
    case TI__BOP_SUB: ti__bin_run256(1, a, sa, b, sb, o, n); return 1;
    case TI__BOP_MUL: ti__bin_run256(2, a, sa, b, sb, o, n); return 1;
    case TI__BOP_DIV: ti__bin_run256(3, a, sa, b, sb, o, n); return 1;
    default: return 0;
    }
}
#endif /* TI__X86_SIMD */

/* float32 Add, Sub, Mul and Div runs of the broadcast binary ops (cpu/binary.c,
 * ti__bin_f32) in aarch64 NEON: o[i] = a op b over n outputs, each input either a
 * contiguous run or one value repeated (the per-channel scale of a squeeze-excitation
 * Mul); the last 1-3 outputs in scalars. Each lane is the IEEE operation the scalar loop
 * does, so the results are the same bits. Must not allocate. */
#ifdef TI__ARM_NEON
#include <arm_neon.h>

/* x op y (op is a constant once inlined): 0 add, 1 sub, 2 mul, 3 div. */
TI__ARM_INLINE float32x4_t ti__bopn(const int op, float32x4_t x, float32x4_t y) {
    switch (op) {
    case 0: return vaddq_f32(x, y);
    case 1: return vsubq_f32(x, y);
    case 2: return vmulq_f32(x, y);
    default: return vdivq_f32(x, y);
    }
}
TI__ARM_INLINE float ti__bop1(const int op, float x, float y) {
    switch (op) {
    case 0: return x + y;
    case 1: return x - y;
    case 2: return x * y;
    default: return x / y;
    }
}

/* o[0:n] = a op b; sa / sb: 1 when a / b is a run of n floats, 0 when it is one value. */
TI__ARM_INLINE void ti__bin_runn(const int op, const float *a, int sa, const float *b, int sb,
                                 float *o, size_t n) {
    const float32x4_t va = vdupq_n_f32(a[0]), vb = vdupq_n_f32(b[0]);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        float32x4_t x0 = sa ? vld1q_f32(a + i) : va, y0 = sb ? vld1q_f32(b + i) : vb;
        float32x4_t x1 = sa ? vld1q_f32(a + i + 4) : va, y1 = sb ? vld1q_f32(b + i + 4) : vb;
        vst1q_f32(o + i, ti__bopn(op, x0, y0));
        vst1q_f32(o + i + 4, ti__bopn(op, x1, y1));
    }
    for (; i + 4 <= n; i += 4)
        vst1q_f32(o + i, ti__bopn(op, sa ? vld1q_f32(a + i) : va, sb ? vld1q_f32(b + i) : vb));
    for (; i < n; i++) o[i] = ti__bop1(op, a[sa ? i : 0], b[sb ? i : 0]);
}

/* 1 when it did o[0:n] = a op b for a TI__BOP_* op, 0 (nothing done) for other ops. */
TI__PRIVATE int ti__bin_f32_neon(int op, const float *a, int sa, const float *b, int sb,
                                 float *o, size_t n) {
    switch (op) {
    case TI__BOP_ADD: case TI__BOP_SUM: case TI__BOP_MEAN:
        ti__bin_runn(0, a, sa, b, sb, o, n);
        return 1;
    case TI__BOP_SUB: ti__bin_runn(1, a, sa, b, sb, o, n); return 1;
    case TI__BOP_MUL: ti__bin_runn(2, a, sa, b, sb, o, n); return 1;
    case TI__BOP_DIV: ti__bin_runn(3, a, sa, b, sb, o, n); return 1;
    default: return 0;
    }
}
#endif /* TI__ARM_NEON */

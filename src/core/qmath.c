/* Fixed-point arithmetic of TFLite's quantization spec, shared by every quantized kernel:
 * real multipliers as (int32 multiplier, shift), the rounding doubling high multiply, the
 * rounding right shift, and the clamp range of a fused activation. Relies on nothing but
 * <math.h>. Must stay bit-exact with TFLite's reference kernels (gemmlowp rounding, double
 * rounding as in TFLite's default build): quantized outputs are compared exactly. */

/* TfLiteRound: round half away from zero (std::round), not to even. */
TI__PRIVATE double ti__q_round(double x) { return x >= 0.0 ? floor(x + 0.5) : ceil(x - 0.5); }

/* real_multiplier = multiplier * 2^(shift - 31), multiplier in [2^30, 2^31). */
TI__PRIVATE void ti__q_quantize_multiplier(double real_multiplier, int32_t *multiplier, int *shift) {
    if (real_multiplier == 0.0 || !(real_multiplier == real_multiplier)) {
        *multiplier = 0;
        *shift = 0;
        return;
    }
    int e;
    double q = frexp(real_multiplier, &e);
    int64_t q_fixed = (int64_t)ti__q_round(q * (double)(1LL << 31));
    if (q_fixed == (1LL << 31)) {
        q_fixed /= 2;
        e++;
    }
    if (e < -31) { /* too small to represent: the product is 0 */
        e = 0;
        q_fixed = 0;
    }
    if (e > 30) { /* saturate: TFLite clamps the shift the same way */
        e = 30;
        q_fixed = (1LL << 31) - 1;
    }
    *multiplier = (int32_t)q_fixed;
    *shift = e;
}

/* gemmlowp SaturatingRoundingDoublingHighMul: round(a * b / 2^31), saturating. */
TI__PRIVATE int32_t ti__q_srdhm(int32_t a, int32_t b) {
    if (a == b && a == INT32_MIN) return INT32_MAX;
    int64_t ab = (int64_t)a * (int64_t)b;
    int64_t nudge = ab >= 0 ? (1LL << 30) : (1 - (1LL << 30));
    return (int32_t)((ab + nudge) / (1LL << 31));
}

/* gemmlowp RoundingDivideByPOT: x / 2^exponent, rounding half away from zero. */
TI__PRIVATE int32_t ti__q_rdbypot(int32_t x, int exponent) {
    if (exponent <= 0) return x;
    int32_t mask = (int32_t)((1LL << exponent) - 1);
    int32_t remainder = x & mask;
    int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

/* TFLite MultiplyByQuantizedMultiplier: x * multiplier * 2^(shift - 31), rounded. */
TI__PRIVATE int32_t ti__q_mul(int32_t x, int32_t multiplier, int shift) {
    int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    int64_t shifted = (int64_t)x * ((int64_t)1 << left);
    if (shifted > INT32_MAX) shifted = INT32_MAX; /* TFLite relies on no overflow here */
    if (shifted < INT32_MIN) shifted = INT32_MIN;
    return ti__q_rdbypot(ti__q_srdhm((int32_t)shifted, multiplier), right);
}

/* TFLite's fused activations (schema ActivationFunctionType). */
enum {
    TI__TFL_ACT_NONE = 0,
    TI__TFL_ACT_RELU = 1,
    TI__TFL_ACT_RELU_N1_TO_1 = 2,
    TI__TFL_ACT_RELU6 = 3,
    TI__TFL_ACT_TANH = 4,
    TI__TFL_ACT_SIGN_BIT = 5
};

/* Clamp range [*lo, *hi] of a fused activation on a quantized output (TFLite
 * CalculateActivationRangeQuantized). qmin/qmax: the dtype's range. Returns 0 for
 * activations that are not a clamp (TANH, SIGN_BIT), which quantized kernels refuse. The
 * bound's quotient is taken in float as TFLite's Quantize does (TfLiteRound(f / scale) on
 * floats): with scale 12 / 255 the float quotient of 6 is 127.5 and rounds to 128 where
 * the double one, 127.4999986, gave 127 (a RELU6 output one step lower than TFLite's). */
TI__PRIVATE int ti__q_act_range(int act, float scale, int64_t zero_point, int32_t qmin, int32_t qmax,
                                int32_t *lo, int32_t *hi) {
    double zp = (double)zero_point;
    *lo = qmin;
    *hi = qmax;
    if (act == TI__TFL_ACT_NONE) return 1;
    if (act != TI__TFL_ACT_RELU && act != TI__TFL_ACT_RELU6 && act != TI__TFL_ACT_RELU_N1_TO_1)
        return 0;
    float lo_q = (act == TI__TFL_ACT_RELU_N1_TO_1 ? -1.0f : 0.0f) / scale; /* rounded to float */
    double q = zp + ti__q_round((double)lo_q);
    if (q > (double)*lo) *lo = q > (double)qmax ? qmax : (int32_t)q;
    if (act != TI__TFL_ACT_RELU) {
        float hi_q = (act == TI__TFL_ACT_RELU6 ? 6.0f : 1.0f) / scale;
        double qh = zp + ti__q_round((double)hi_q);
        if (qh < (double)*hi) *hi = qh < (double)qmin ? qmin : (int32_t)qh;
    }
    return 1;
}

/* Clamp range of a fused activation on a float output; 0 for TANH/SIGN_BIT. */
TI__PRIVATE int ti__f_act_range(int act, float *lo, float *hi) {
    *lo = -FLT_MAX;
    *hi = FLT_MAX;
    switch (act) {
    case TI__TFL_ACT_NONE: return 1;
    case TI__TFL_ACT_RELU: *lo = 0.0f; return 1;
    case TI__TFL_ACT_RELU6: *lo = 0.0f; *hi = 6.0f; return 1;
    case TI__TFL_ACT_RELU_N1_TO_1: *lo = -1.0f; *hi = 1.0f; return 1;
    default: return 0;
    }
}

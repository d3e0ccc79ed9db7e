/* Tensor helpers: half-precision conversions (every half value round-trips; rounding to
 * nearest even at the edges, subnormals included), bfloat16 rounding, shapes with checked
 * sizes, broadcasting, and the element accessors across dtypes. */
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#include "ti_test.h"

TI_TEST(half_round_trips_every_value) {
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = ti__f16_to_f32((uint16_t)h);
        if (f != f) continue; /* NaN payloads need not survive */
        if (ti__f32_to_f16(f) != h) bad++;
    }
    TI_CHECK_EQ_INT(bad, 0);
}

TI_TEST(half_rounding_edges) {
    TI_CHECK_EQ_INT(ti__f32_to_f16(1.0f), 0x3c00);
    TI_CHECK_EQ_INT(ti__f32_to_f16(65504.0f), 0x7bff);
    TI_CHECK_EQ_INT(ti__f32_to_f16(65520.0f), 0x7c00);      /* rounds up to inf */
    TI_CHECK_EQ_INT(ti__f32_to_f16(65519.0f), 0x7bff);
    TI_CHECK_EQ_INT(ti__f32_to_f16(-2.0f), 0xc000);
    TI_CHECK_EQ_INT(ti__f32_to_f16(ldexpf(1.0f, -24)), 0x0001); /* smallest subnormal */
    TI_CHECK_EQ_INT(ti__f32_to_f16(ldexpf(1.0f, -25)), 0x0000); /* tie to even: 0 */
    TI_CHECK_EQ_INT(ti__f32_to_f16(ldexpf(3.0f, -25)), 0x0002); /* 1.5 units: tie to even 2 */
    TI_CHECK_EQ_INT(ti__f32_to_f16(ldexpf(1.0f, -15)), 0x0200); /* subnormal, exact */
    TI_CHECK_EQ_INT(ti__f32_to_f16(1.0f + ldexpf(1.0f, -11)), 0x3c00); /* tie: even mantissa */
    TI_CHECK_EQ_INT(ti__f32_to_f16(1.0f + ldexpf(3.0f, -11)), 0x3c02);
    TI_CHECK(ti__f16_to_f32(0x7e00) != ti__f16_to_f32(0x7e00)); /* NaN stays NaN */
    TI_CHECK_EQ_INT(ti__f32_to_bf16(1.0f), 0x3f80);
    TI_CHECK_EQ_INT(ti__f32_to_bf16(1.0f + ldexpf(1.0f, -8)), 0x3f80); /* tie to even */
    TI_CHECK_EQ_INT(ti__f32_to_bf16(1.0f + ldexpf(3.0f, -8)), 0x3f82);
    TI_CHECK_NEAR(ti__bf16_to_f32(0x4049), 3.140625, 0);
}

TI_TEST(shapes_are_checked) {
    ti_tensor t;
    memset(&t, 0, sizeof t);
    int64_t d[3] = {2, 3, 4};
    TI_CHECK(ti__set_shape(&t, TI_DTYPE_F32, 3, d));
    TI_CHECK_EQ_INT(t.size_bytes, 96);
    TI_CHECK_EQ_INT(ti_tensor_numel(&t), 24);
    int64_t huge[3] = {1LL << 40, 1LL << 40, 4};
    TI_CHECK(!ti__set_shape(&t, TI_DTYPE_F32, 3, huge)); /* overflows size_t */
    int64_t neg[1] = {-1};
    TI_CHECK(!ti__set_shape(&t, TI_DTYPE_F32, 1, neg));
    TI_CHECK(!ti__set_shape(&t, TI_DTYPE_F32, TI_MAX_DIMS + 1, d));
    TI_CHECK(ti__set_shape(&t, TI_DTYPE_I64, 0, NULL)); /* a scalar */
    TI_CHECK_EQ_INT(t.size_bytes, 8);
    int64_t a[3] = {4, 1, 3}, b[2] = {5, 1}, out[TI_MAX_DIMS];
    int r;
    TI_CHECK(ti__broadcast_shape(3, a, 2, b, &r, out));
    TI_CHECK_EQ_INT(r, 3);
    TI_CHECK(out[0] == 4 && out[1] == 5 && out[2] == 3);
    int64_t c[1] = {2};
    TI_CHECK(!ti__broadcast_shape(3, a, 1, c, &r, out));
    TI_CHECK(strcmp(ti_dtype_name(TI_DTYPE_BF16), "bfloat16") == 0);
    TI_CHECK(strcmp(ti_dtype_name((ti_dtype)1234), "unknown") == 0);
    TI_CHECK_EQ_INT(ti_dtype_size(TI_DTYPE_F16), 2);
}

TI_TEST(element_access_across_dtypes) {
    int32_t i32[2] = {-7, 9};
    ti_tensor t;
    memset(&t, 0, sizeof t);
    int64_t d[1] = {2};
    ti__set_shape(&t, TI_DTYPE_I32, 1, d);
    t.data = i32;
    TI_CHECK_EQ_INT(ti__get_i64(&t, 0), -7);
    ti__set_f64(&t, 1, 3.9); /* float to int truncates toward zero */
    TI_CHECK_EQ_INT(i32[1], 3);
    uint16_t h[1];
    ti__set_shape(&t, TI_DTYPE_F16, 1, d);
    t.data = h;
    ti__set_f64(&t, 0, 0.5);
    TI_CHECK_EQ_INT(h[0], 0x3800);
    TI_CHECK_NEAR(ti__get_f64(&t, 0), 0.5, 0);
    double big = 1e30;
    ti__set_shape(&t, TI_DTYPE_F64, 1, d);
    t.data = &big;
    TI_CHECK(ti__get_i64(&t, 0) == INT64_MAX); /* saturates, no UB */
}

int main(void) {
    TI_RUN(half_round_trips_every_value);
    TI_RUN(half_rounding_edges);
    TI_RUN(shapes_are_checked);
    TI_RUN(element_access_across_dtypes);
    return ti_test_summary();
}

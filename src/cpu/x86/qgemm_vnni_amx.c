/* The 8-bit GEMM on AMX tiles (the tile path of core/qgemm.c's byte path): TDPBUSD multiplies
 * a tile of unsigned A bytes by a tile of signed B bytes (TDPBSSD: signed by signed), 16 rows
 * x 16 columns x 64 depths into int32 sums, modulo 2^32 like VPDPBUSD, so its sums equal the
 * VNNI kernels' bit for bit once the caller's start values carry the same corrections. B's
 * tiles are ti__qg8_pack's blocks as they lie ([depth quad][16 columns][4 depths] is the
 * layout a B tile wants), A's the rows of a 1x1 conv's input as they lie. The sums are then
 * requantized 32 columns at a time by the VNNI path's steps (cpu/x86/qgemm_vnni.c, before
 * this file in the amalgamation: ti__qv_rq_w, ti__qv_pack2). Compiled with a function-level
 * target attribute, run only at the TI__ISA_AMX level (cpu/x86/cpuid.c asks Linux for the
 * tile state). Must not allocate. */
#if defined(TI__X86_SIMD) && defined(TI__X86_VNNI) && defined(TI__X86_AMX)

/* LDTILECFG's 64 bytes (palette 1): each tile's bytes per row and rows */
typedef struct ti__amx_cfg {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} ti__amx_cfg;

/* The depth quads of one tile step for a depth of kq quads: the largest divisor of kq up to 16
 * (a tile row holds 64 bytes), so every step is whole and no read passes A's rows or B's
 * blocks; 0 where that leaves steps of under 4 quads (kq = 17, 19, 34, ...) or the depth is
 * under 64 (kq < 16): there the VNNI kernels, which requantize the sums where they made them,
 * are about as fast or faster. MobileNetV2 int8's 1x1 convs at 1 thread, AMX / VNNI time:
 * depth 16 and 24 0.94-1.14 (bench/qtile.c, bench/ab.py, 2-core Xeon VM); depth 32 0.76-0.94
 * there but 1.48 on a 16-core Xeon host; depth 64 0.70 and 0.90, 96 0.58 and 0.91. */
TI__PRIVATE size_t ti__qg8_amx_step(size_t kq) {
    if (kq < 16) return 0;
    for (size_t s = 16; s >= 4; s--)
        if (kq % s == 0) return s;
    return 0;
}

/* GCC's tile intrinsics are asm statements that name no memory: the compiler must not move
 * a store that a tile load reads, or a load of what a tile store wrote, across them. */
#define TI__AMX_FENCE() __asm__ __volatile__("" ::: "memory")

/* Rows nr (a multiple of 16) of A, kq depth quads each (ti__qg8_amx_step(kq) = sq of them per
 * step), lda apart, int8 as they lie when i8 (TDPBSSD) else uint8 (TDPBUSD), times the nc
 * columns of B (blocks of 16 bs bytes apart at b); a column's sums start at init[c] (nc
 * rounded up to 32 of them; with i8 they must include 128 * sum_k b[k][c], what the signed A
 * lacks against A + 128), row r's get its bytes' sum times rowm added (rowm 0: nothing), and
 * are requantized by t (its arrays from column 0, ti__qg8_plan_vnni's float scales for every
 * column) to bytes at out[r * ldo + c]. Blocks of 32 rows (then one of 16) against 32
 * columns at a time: 4 tiles of sums, 2 of A, 2 of B. */
TI__PRIVATE TI__TARGET_AMX void ti__qg8_amx_rq(size_t nr, size_t kq, size_t sq,
                                               const uint8_t *a, size_t lda, int i8,
                                               const int8_t *b, size_t bs, size_t nc,
                                               const int32_t *init, int32_t rowm,
                                               const ti__qg8_rqt *t, uint8_t *out, size_t ldo) {
    ti__amx_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int i = 0; i < 4; i++) cfg.colsb[i] = 64, cfg.rows[i] = 16; /* sums: 16 x 16 int32 */
    for (int i = 4; i < 6; i++) cfg.colsb[i] = (uint16_t)(sq * 4), cfg.rows[i] = 16; /* A */
    for (int i = 6; i < 8; i++) cfg.colsb[i] = 64, cfg.rows[i] = (uint8_t)sq;        /* B */
    TI__AMX_FENCE();
    _tile_loadconfig(&cfg);
    int32_t sums[32 * 32]; /* rows x 32 columns */
    int32_t rowv[32];
    const size_t nblk = (nc + 15) / 16, steps = kq / sq;
    const __m512i yo16 = _mm512_set1_epi16((short)t->yo);
    const __m512i lo8 = _mm512_set1_epi8((char)t->lo), hi8 = _mm512_set1_epi8((char)t->hi);
    const __m512i perm = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
    const int upk = t->lo >= 0 && t->hi <= 255;
    for (size_t r0 = 0; r0 + 16 <= nr; r0 += 32) {
        const int two_rows = r0 + 32 <= nr;
        const size_t rows = two_rows ? 32 : 16;
        const uint8_t *a0 = a + r0 * lda, *a1 = a0 + 16 * lda;
        uint8_t *o = out + r0 * ldo;
        for (size_t r = 0; rowm != 0 && r < rows; r++)
            rowv[r] = (int32_t)(ti__qg8_copy_vnni(NULL, a0 + r * lda, kq * 4, 0) * (uint32_t)rowm);
        for (size_t j = 0; j < nblk; j += 2) {
            TI__AMX_FENCE(); /* the last block's sums read before this one's are stored */
            const int two = j + 1 < nblk; /* a second block of 16 columns */
            const int8_t *b0 = b + j * bs, *b1 = b0 + bs;
            /* each tile row starts at the columns' init (a load with row stride 0) */
            _tile_loadd(0, init + j * 16, 0);
            if (two) _tile_loadd(1, init + j * 16 + 16, 0);
            if (two_rows) {
                _tile_loadd(2, init + j * 16, 0);
                if (two) _tile_loadd(3, init + j * 16 + 16, 0);
            }
            for (size_t p = 0; p < steps; p++) {
                if (steps > 1 || j == 0) { /* one step: A's tiles stay for every column */
                    _tile_loadd(4, a0 + p * sq * 4, lda);
                    if (two_rows) _tile_loadd(5, a1 + p * sq * 4, lda);
                }
                _tile_loadd(6, b0 + p * sq * 64, 64);
                if (two) _tile_loadd(7, b1 + p * sq * 64, 64);
                if (i8) {
                    _tile_dpbssd(0, 4, 6);
                    if (two) _tile_dpbssd(1, 4, 7);
                    if (two_rows) {
                        _tile_dpbssd(2, 5, 6);
                        if (two) _tile_dpbssd(3, 5, 7);
                    }
                } else {
                    _tile_dpbusd(0, 4, 6);
                    if (two) _tile_dpbusd(1, 4, 7);
                    if (two_rows) {
                        _tile_dpbusd(2, 5, 6);
                        if (two) _tile_dpbusd(3, 5, 7);
                    }
                }
            }
            _tile_stored(0, sums, 128);
            if (two) _tile_stored(1, sums + 16, 128);
            if (two_rows) {
                _tile_stored(2, sums + 16 * 32, 128);
                if (two) _tile_stored(3, sums + 16 * 32 + 16, 128);
            }
            TI__AMX_FENCE();
            /* the 32 (or 16) columns' requantization, as ti__qv_tile_rq's */
            const size_t c = j * 16, ncol = TI__MIN(nc - c, (size_t)32);
            const __mmask32 km = (__mmask32)(ncol >= 32 ? 0xffffffffu : (1u << ncol) - 1u);
            const __mmask16 k0 = (__mmask16)km, k1 = (__mmask16)(km >> 16);
            const __m512 s0 = _mm512_loadu_ps(t->s + c), e0 = _mm512_loadu_ps(t->e + c);
            const __m512 s1 = two ? _mm512_loadu_ps(t->s + c + 16) : s0;
            const __m512 e1 = two ? _mm512_loadu_ps(t->e + c + 16) : e0;
            const int32_t *mult = t->mult + c, *shift = t->shift + c;
            for (size_t r = 0; r < rows; r += 2) {
                __m512i w[2];
                for (size_t i = 0; i < 2; i++) {
                    __m512i v0 = _mm512_loadu_si512((const void *)(sums + (r + i) * 32));
                    __m512i v1 = _mm512_loadu_si512((const void *)(sums + (r + i) * 32 + 16));
                    if (rowm != 0) {
                        __m512i rv = _mm512_set1_epi32(rowv[r + i]);
                        v0 = _mm512_add_epi32(v0, rv);
                        v1 = _mm512_add_epi32(v1, rv);
                    }
                    w[i] = two ? ti__qv_rq_w(2, v0, v1, s0, e0, s1, e1, mult, shift, k0, k1, yo16)
                               : ti__qv_rq_w(1, v0, v1, s0, e0, s1, e1, mult, shift, k0, k1, yo16);
                }
                __m512i ov = ti__qv_pack2(w[0], w[1], upk, lo8, hi8, perm);
                _mm256_mask_storeu_epi8(o + r * ldo + c, km, _mm512_castsi512_si256(ov));
                _mm256_mask_storeu_epi8(o + (r + 1) * ldo + c, km, _mm512_extracti64x4_epi64(ov, 1));
            }
        }
    }
    _tile_release();
}
#undef TI__AMX_FENCE
#endif /* TI__X86_AMX */

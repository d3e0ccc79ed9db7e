/* OpenCL C source of the GPU kernels, as C strings: one program per group, built only
 * when a session places a node that needs it. Every tensor argument is a buffer and an
 * element offset (tensors live in one activation buffer and one constant buffer, at the
 * offsets the CPU arena uses), and small integer tables (shapes, strides) come the same
 * way from the constant buffer. Fused activations are the ti__act codes of internal.h.
 * Relies on nothing; read by cl/runtime.c. Kernels check their global ids against the
 * real sizes, so any local size may be used (global sizes are rounded up). */
#ifndef TI_NO_OPENCL

/* Shared by every program: the activation function and index helpers. */
static const char *const ti__cl_src_common[] = {

    /* Tensor storage: float, or with -DTI_F16 IEEE halves read with vload_half and
     * written with vstore_half_rte (core OpenCL C since 1.0: no cl_khr_fp16 needed), the
     * arithmetic staying in float. -DTI_F16_ARITH (only when the device reports
     * cl_khr_fp16) also keeps the GEMM tiles in half in local memory and multiplies them
     * in half, summing in float. TI_MAC / TI_MAD give the fp32 programs the exact
     * expressions they had before (fma, and a + b * c). */
    "#ifdef TI_F16_ARITH\n#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n#endif\n"
    "#ifdef TI_F16\n"
    "#define TI_S half\n"
    "#define TI_LD(p, i) vload_half((i), (p))\n"
    "#define TI_ST(p, i, v) vstore_half_rte((v), (i), (p))\n"
    "#else\n"
    "#define TI_S float\n"
    "#define TI_LD(p, i) (p)[i]\n"
    "#define TI_ST(p, i, v) ((p)[i] = (v))\n"
    "#endif\n"
    "#ifdef TI_F16_ARITH\n"
    "#define TI_C half\n"
    "#define TI_MAC(acc, a, b) ((acc) + (float)((a) * (b)))\n"
    "#define TI_MAD(acc, a, b) ((acc) + (float)((a) * (b)))\n"
    "#else\n"
    "#define TI_C float\n"
    "#define TI_MAC(acc, a, b) fma((a), (b), (acc))\n"
    "#define TI_MAD(acc, a, b) ((acc) + (a) * (b))\n"
    "#endif\n"
    "#define TI_ACT_NONE 0\n"
    "float ti_act(float x, int act, float a, float b) {\n"
    "  switch (act) {\n"
    "  case 1: return x > 0.0f ? x : 0.0f;\n"
    "  case 2: return x < a ? a : (x > b ? b : x);\n"
    "  case 3: return x >= 0.0f ? x : a * x;\n"
    "  case 4: return 1.0f / (1.0f + exp(-x));\n"
    "  case 5: { float y = a * x + b; return y < 0.0f ? 0.0f : (y > 1.0f ? 1.0f : y); }\n"
    "  case 6: { float y = x / 6.0f + 0.5f; return x * (y < 0.0f ? 0.0f : (y > 1.0f ? 1.0f : y)); }\n"
    "  case 7: return tanh(x);\n"
    "  case 8: return x / (1.0f + exp(-x));\n"
    "  default: return x;\n"
    "  }\n"
    "}\n",
    NULL};

/* Elementwise, copies, pooling, normalisation. Unary op codes: see ti__cl_unary_code. */
static const char *const ti__cl_src_eltwise[] = {

    "__kernel void ti_unary(__global const TI_S *x, int xo, __global TI_S *y, int yo,\n"
    "                       int n, int op, float a, float b) {\n"
    "  int i = get_global_id(0);\n"
    "  if (i >= n) return;\n"
    "  float v = TI_LD(x, xo + i), r;\n"
    "  switch (op) {\n"
    "  case 100: r = -v; break;\n"
    "  case 101: r = fabs(v); break;\n"
    "  case 102: r = exp(v); break;\n"
    "  case 103: r = sqrt(v); break;\n"
    "  case 104: r = erf(v); break;\n"
    "  case 105: r = log(v); break;\n"
    "  case 106: r = 1.0f / v; break;\n"
    "  case 107: r = 0.5f * v * (1.0f + erf(v * 0.70710678118654752f)); break;\n"
    "  case 108: r = v > 0.0f ? v : a * (exp(v) - 1.0f); break;\n"
    "  case 109: r = floor(v); break;\n"
    "  case 110: r = ceil(v); break;\n"
    "  case 111: r = v * v; break;\n"
    "  case 112: r = log(1.0f + exp(v)); break;\n"
    "  default: r = ti_act(v, op, a, b); break;\n"
    "  }\n"
    "  TI_ST(y, yo + i, r);\n"
    "}\n",
    /* y = a op b with numpy broadcast: p holds rank, out dims, a strides, b strides */
    "float ti_binop(float a, float b, int op) {\n"
    "  switch (op) {\n"
    "  case 0: return a + b;\n"
    "  case 1: return a - b;\n"
    "  case 2: return a * b;\n"
    "  case 3: return a / b;\n"
    "  case 4: return fmax(a, b);\n"
    "  case 5: return fmin(a, b);\n"
    "  default: return pow(a, b);\n"
    "  }\n"
    "}\n",
    "__kernel void ti_binary(__global const TI_S *a, int ao, __global const TI_S *b, int bo,\n"
    "                        __global TI_S *y, int yo, __global const int *p, int po, int n,\n"
    "                        int op, int act, float aa, float ab) {\n"
    "  int i = get_global_id(0);\n"
    "  if (i >= n) return;\n"
    "  p += po;\n"
    "  int r = p[0], rem = i, ia = 0, ib = 0;\n"
    "  for (int d = r - 1; d >= 0; d--) {\n"
    "    int dim = p[1 + d], c = rem % dim;\n"
    "    rem /= dim;\n"
    "    ia += c * p[1 + r + d];\n"
    "    ib += c * p[1 + 2 * r + d];\n"
    "  }\n"
    "  TI_ST(y, yo + i, ti_act(ti_binop(TI_LD(a, ao + ia), TI_LD(b, bo + ib), op), act, aa, ab));\n"
    "}\n",
    /* same-shape fast path, and one operand a per-channel vector ([C] over planes of hw) */
    "__kernel void ti_binary_same(__global const TI_S *a, int ao, __global const TI_S *b,\n"
    "                             int bo, __global TI_S *y, int yo, int n, int op, int act,\n"
    "                             float aa, float ab) {\n"
    "  int i = get_global_id(0);\n"
    "  if (i >= n) return;\n"
    "  TI_ST(y, yo + i, ti_act(ti_binop(TI_LD(a, ao + i), TI_LD(b, bo + i), op), act, aa, ab));\n"
    "}\n",
    "__kernel void ti_binary_chan(__global const TI_S *a, int ao, __global const TI_S *b,\n"
    "                             int bo, __global TI_S *y, int yo, int n, int hw, int c,\n"
    "                             int op, int act, float aa, float ab) {\n"
    "  int i = get_global_id(0);\n"
    "  if (i >= n) return;\n"
    "  TI_ST(y, yo + i, ti_act(ti_binop(TI_LD(a, ao + i), TI_LD(b, bo + (i / hw) % c), op), act, aa, ab));\n"
    "}\n",
    /* y[i] = x[sum_d coord_d * stride_d]: copies, transposes, slices, concat/split parts.
     * p: rank, out dims, x strides; y is written at yo + i * 1 within a block whose own
     * strides (for concat into a slice) are the last rank values */
    "__kernel void ti_copy(__global const TI_S *x, int xo, __global TI_S *y, int yo,\n"
    "                      __global const int *p, int po, int n) {\n"
    "  int i = get_global_id(0);\n"
    "  if (i >= n) return;\n"
    "  p += po;\n"
    "  int r = p[0], rem = i, ix = 0, iy = 0;\n"
    "  for (int d = r - 1; d >= 0; d--) {\n"
    "    int dim = p[1 + d], c = rem % dim;\n"
    "    rem /= dim;\n"
    "    ix += c * p[1 + r + d];\n"
    "    iy += c * p[1 + 2 * r + d];\n"
    "  }\n"
    "  TI_ST(y, yo + iy, TI_LD(x, xo + ix));\n"
    "}\n",
    "__kernel void ti_copy_flat(__global const TI_S *x, int xo, __global TI_S *y, int yo,\n"
    "                           int n) {\n"
    "  int i = get_global_id(0);\n"
    "  if (i < n) TI_ST(y, yo + i, TI_LD(x, xo + i));\n"
    "}\n",
    /* one work-group per plane: mean (op 0) or max (op 1) of hw values */
    "__kernel void ti_gpool(__global const TI_S *x, int xo, __global TI_S *y, int yo,\n"
    "                       int planes, int hw, int op, __local float *tmp) {\n"
    "  int g = get_group_id(0), l = get_local_id(0), ls = get_local_size(0);\n"
    "  if (g >= planes) return;\n"
    "  __global const TI_S *px = x + xo + (size_t)g * hw;\n"
    "  float acc = op ? -INFINITY : 0.0f;\n"
    "  for (int i = l; i < hw; i += ls) acc = op ? fmax(acc, TI_LD(px, i)) : acc + TI_LD(px, i);\n"
    "  tmp[l] = acc;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (int s = ls / 2; s > 0; s >>= 1) {\n"
    "    if (l < s) tmp[l] = op ? fmax(tmp[l], tmp[l + s]) : tmp[l] + tmp[l + s];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  if (l == 0) TI_ST(y, yo + g, op ? tmp[0] : tmp[0] / (float)hw);\n"
    "}\n",
    /* MaxPool / AveragePool 2-D: one output element a work item. p: ih iw oh ow kh kw sh
     * sw ph pw dh dw count_include_pad */
    "__kernel void ti_pool2d(__global const TI_S *x, int xo, __global TI_S *y, int yo,\n"
    "                        __global const int *p, int po, int n, int op) {\n"
    "  int i = get_global_id(0);\n"
    "  if (i >= n) return;\n"
    "  p += po;\n"
    "  int ih = p[0], iw = p[1], oh = p[2], ow = p[3], kh = p[4], kw = p[5];\n"
    "  int ox = i % ow, oy = (i / ow) % oh, plane = i / (ow * oh);\n"
    "  int y0 = oy * p[6] - p[8], x0 = ox * p[7] - p[9];\n"
    "  __global const TI_S *px = x + xo + (size_t)plane * ih * iw;\n"
    "  float acc = op ? 0.0f : -INFINITY;\n"
    "  int cnt = 0;\n"
    "  for (int fy = 0; fy < kh; fy++) {\n"
    "    int iy = y0 + fy * p[10];\n"
    "    if (iy < 0 || iy >= ih) continue;\n"
    "    for (int fx = 0; fx < kw; fx++) {\n"
    "      int ix = x0 + fx * p[11];\n"
    "      if (ix < 0 || ix >= iw) continue;\n"
    "      float v = TI_LD(px, iy * iw + ix);\n"
    "      acc = op ? acc + v : fmax(acc, v);\n"
    "      cnt++;\n"
    "    }\n"
    "  }\n"
    "  if (op) {\n"
    "    if (p[12]) {\n"
    "      int ye = min(y0 + (kh - 1) * p[10] + 1, ih + p[13]), xe = min(x0 + (kw - 1) * p[11] + 1, iw + p[14]);\n"
    "      int ys = y0, xs = x0;\n"
    "      cnt = ((ye - ys + p[10] - 1) / p[10]) * ((xe - xs + p[11] - 1) / p[11]);\n"
    "    }\n"
    "    acc = cnt > 0 ? acc / (float)cnt : 0.0f;\n"
    "  }\n"
    "  TI_ST(y, yo + i, acc);\n"
    "}\n",
    /* softmax / log-softmax over `len` elements with stride `inner`: one row a work item */
    "__kernel void ti_softmax(__global const TI_S *x, int xo, __global TI_S *y, int yo,\n"
    "                         int rows, int len, int inner, int log_sm) {\n"
    "  int r = get_global_id(0);\n"
    "  if (r >= rows) return;\n"
    "  int base = (r / inner) * len * inner + r % inner;\n"
    "  __global const TI_S *px = x + xo + base;\n"
    "  __global TI_S *py = y + yo + base;\n"
    "  float mx = -INFINITY, s = 0.0f;\n"
    "  for (int i = 0; i < len; i++) mx = fmax(mx, TI_LD(px, i * inner));\n"
    "  for (int i = 0; i < len; i++) s += exp(TI_LD(px, i * inner) - mx);\n"
    "  if (log_sm) { float ls = log(s); for (int i = 0; i < len; i++) TI_ST(py, i * inner, TI_LD(px, i * inner) - mx - ls); }\n"
    "  else { float inv = 1.0f / s; for (int i = 0; i < len; i++) TI_ST(py, i * inner, exp(TI_LD(px, i * inner) - mx) * inv); }\n"
    "}\n",
    /* LayerNormalization over the last `len` elements of each row */
    "__kernel void ti_layernorm(__global const TI_S *x, int xo, __global const TI_S *g, int go,\n"
    "                           __global const TI_S *b, int bo, int has_b, __global TI_S *y,\n"
    "                           int yo, int rows, int len, float eps) {\n"
    "  int r = get_global_id(0);\n"
    "  if (r >= rows) return;\n"
    "  __global const TI_S *px = x + xo + (size_t)r * len;\n"
    "  __global TI_S *py = y + yo + (size_t)r * len;\n"
    "  float m = 0.0f, v = 0.0f;\n"
    "  for (int i = 0; i < len; i++) m += TI_LD(px, i);\n"
    "  m /= (float)len;\n"
    "  for (int i = 0; i < len; i++) { float d = TI_LD(px, i) - m; v += d * d; }\n"
    "  float inv = 1.0f / sqrt(v / (float)len + eps);\n"
    "  for (int i = 0; i < len; i++)\n"
    "    TI_ST(py, i, (TI_LD(px, i) - m) * inv * TI_LD(g, go + i) + (has_b ? TI_LD(b, bo + i) : 0.0f));\n"
    "}\n",
    /* BatchNormalization (inference): y = (x - mean) * scale / sqrt(var + eps) + bias */
    "__kernel void ti_batchnorm(__global const TI_S *x, int xo, __global const TI_S *sc, int so,\n"
    "                           __global const TI_S *bi, int bo, __global const TI_S *mu,\n"
    "                           int mo, __global const TI_S *va, int vo, __global TI_S *y,\n"
    "                           int yo, int n, int hw, int c, float eps) {\n"
    "  int i = get_global_id(0);\n"
    "  if (i >= n) return;\n"
    "  int ch = (i / hw) % c;\n"
    "  TI_ST(y, yo + i, (TI_LD(x, xo + i) - TI_LD(mu, mo + ch)) * (TI_LD(sc, so + ch) / sqrt(TI_LD(va, vo + ch) + eps)) + TI_LD(bi, bo + ch));\n"
    "}\n",
    /* fp16 storage: the host boundary (model inputs and outputs, nodes on the CPU) is
     * float; these convert a tensor between the float mirror and the half buffer */
    "__kernel void ti_to_half(__global const float *x, int xo, __global half *y, int yo, int n) {\n"
    "  int i = get_global_id(0);\n"
    "  if (i < n) vstore_half_rte(x[xo + i], yo + i, y);\n"
    "}\n"
    "__kernel void ti_from_half(__global const half *x, int xo, __global float *y, int yo, int n) {\n"
    "  int i = get_global_id(0);\n"
    "  if (i < n) y[yo + i] = vload_half(xo + i, x);\n"
    "}\n",
    NULL};

/* Ungrouped conv as an implicit GEMM: Y[m][pix] = W[m][k] X'[k][pix] with k = (ci, fy,
 * fx) and X' gathered from the input on the fly (no im2col buffer). A group of 64 work
 * items computes a CG_T x CG_T block of Y (CG_TS = log2 CG_T), each item CG_R x CG_R of it
 * (rows tm + 8 i, columns tn + 8 j, CG_T = 8 CG_R: a warp's stores are contiguous), through
 * 16-deep slices of W and X' in local memory. The block is a compile-time choice: 32 / 4
 * (ti_conv_gemm, the default), and in their own program, built only when a tuning file
 * asks for one, 16 / 2 and 64 / 8 (ti_conv_gemm_t16, ti_conv_gemm_t64). Every item loads
 * the same X' column (its pixel decoded once) and the same W column in each slice, as 64
 * is a multiple of CG_T and of 16. Split-K: group z works on k in [s * kc, s * kc + kc)
 * for s = z % S; with S > 1 it writes its partial sums to part[b][s][m][pix] and
 * ti_conv_splitk adds them up (batch-1 layers with few output blocks still fill the
 * device). Item indices come from shifts and masks, not / and %: with signed t / 32 and
 * t % 8 NVIDIA's compiler made the whole H100 model runs 25-30 % slower (measured). A list
 * of string literals: each stays under C99's 4095 bytes. */
#define TI__CL_SRC_CONV_GEMM                                                                   \
    "#define CG_K 16\n"                                                                         \
    "__kernel __attribute__((reqd_work_group_size(64, 1, 1)))\n"                                \
    "void CG_NAME(__global const TI_S *x, int xo, __global const TI_S *w, int wo,\n"           \
    "             __global const TI_S *bias, int bo, int has_bias,\n"                           \
    "             __global TI_S *y, int yo, __global float *part,\n"                            \
    "             __global const int *p, int po, int act, float aa, float ab) {\n"              \
    "  p += po;\n"                                                                              \
    "  int c = p[0], ih = p[1], iw = p[2], m = p[3], oh = p[4], ow = p[5], kh = p[6], kw = p[7];\n" \
    "  int sh = p[8], sw = p[9], ph = p[10], pw = p[11], dh = p[12], dw = p[13];\n"             \
    "  int K = p[15], kc = p[16], S = p[17];\n"                                                 \
    "  int P = oh * ow, khw = kh * kw;\n"                                                       \
    "  int t = get_local_id(0);\n"                                                              \
    "  int n0 = get_group_id(0) * CG_T, m0 = get_group_id(1) * CG_T, z = get_group_id(2);\n"    \
    "  int s = z % S, b = z / S;\n"                                                             \
    "  int kb = s * kc, ke = min(K, kb + kc);\n"                                                \
    "  __local TI_C As[CG_K][CG_T + 1];\n"                                                      \
    "  __local TI_C Bs[CG_K][CG_T];\n",                                                        \
    /* loaders: X' column bn, rows bk0 + (64 / CG_T) i; W rows am0 + 4 i, column ak (16 \
     * consecutive k of a row per 16 items) */                                                  \
    "  int bn = t & (CG_T - 1), bk0 = t >> CG_TS, ak = t & 15, am0 = t >> 4;\n"               \
    "  int pn = n0 + bn, oy = pn / ow, ox = pn - (pn / ow) * ow;\n"                             \
    "  int iy0 = oy * sh - ph, ix0 = ox * sw - pw, nok = pn < P;\n"                             \
    "  __global const TI_S *xb = x + xo + (size_t)b * c * ih * iw;\n"                           \
    "  __global const TI_S *wb = w + wo;\n"                                                     \
    "  int tm = t >> 3, tn = t & 7;\n"                                                          \
    "  float acc[CG_R][CG_R];\n"                                                                \
    "  for (int i = 0; i < CG_R; i++) for (int j = 0; j < CG_R; j++) acc[i][j] = 0.0f;\n"      \
    "  for (int k0 = kb; k0 < ke; k0 += CG_K) {\n"                                              \
    "    for (int i = 0; i < CG_T / 4; i++) {\n"                                                \
    "      int mm = m0 + am0 + 4 * i, kk = k0 + ak;\n"                                          \
    "      As[ak][am0 + 4 * i] = (mm < m && kk < ke) ? TI_LD(wb, (size_t)mm * K + kk) : 0.0f;\n" \
    "    }\n"                                                                                   \
    "    for (int i = 0; i < CG_K * CG_T / 64; i++) {\n"                                        \
    "      int kr = bk0 + (64 / CG_T) * i, kk = k0 + kr;\n"                                     \
    "      float v = 0.0f;\n"                                                                   \
    "      if (nok && kk < ke) {\n"                                                             \
    "        int ci = kk / khw, r = kk - ci * khw, fy = r / kw, fx = r - fy * kw;\n"            \
    "        int iy = iy0 + fy * dh, ix = ix0 + fx * dw;\n"                                     \
    "        if (iy >= 0 && iy < ih && ix >= 0 && ix < iw) v = TI_LD(xb, ((size_t)ci * ih + iy) * iw + ix);\n" \
    "      }\n"                                                                                 \
    "      Bs[kr][bn] = v;\n"                                                                   \
    "    }\n"                                                                                   \
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"                                                       \
    "    for (int kk = 0; kk < CG_K; kk++) {\n"                                                 \
    "      TI_C a[CG_R], v[CG_R];\n"                                                            \
    "      for (int i = 0; i < CG_R; i++) a[i] = As[kk][tm + 8 * i];\n"                      \
    "      for (int j = 0; j < CG_R; j++) v[j] = Bs[kk][tn + 8 * j];\n"                      \
    "      for (int i = 0; i < CG_R; i++) for (int j = 0; j < CG_R; j++) acc[i][j] = TI_MAC(acc[i][j], a[i], v[j]);\n" \
    "    }\n"                                                                                   \
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"                                                       \
    "  }\n"                                                                                     \
    "  for (int i = 0; i < CG_R; i++) {\n"                                                      \
    "    int mm = m0 + tm + 8 * i;\n"                                                        \
    "    if (mm >= m) continue;\n"                                                              \
    "    float bv = (S == 1 && has_bias) ? TI_LD(bias, bo + mm) : 0.0f;\n"                      \
    "    for (int j = 0; j < CG_R; j++) {\n"                                                    \
    "      int nn = n0 + tn + 8 * j;\n"                                                      \
    "      if (nn >= P) continue;\n"                                                            \
    "      if (S == 1) TI_ST(y, yo + ((size_t)b * m + mm) * P + nn, ti_act(acc[i][j] + bv, act, aa, ab));\n" \
    "      else part[(((size_t)b * S + s) * m + mm) * P + nn] = acc[i][j];\n"                   \
    "    }\n"                                                                                   \
    "  }\n"                                                                                     \
    "}\n"                                                                                       \
    "#undef CG_K\n"

/* Convolutions (NCHW, weights [M, C/group, kh, kw]) with bias and fused activation. */
static const char *const ti__cl_src_conv[] = {

    /* generic: one output element a work item; global (ow*oh, m, n) */
    "__kernel void ti_conv2d(__global const TI_S *x, int xo, __global const TI_S *w, int wo,\n"
    "                        __global const TI_S *bias, int bo, int has_bias,\n"
    "                        __global TI_S *y, int yo, __global const int *p, int po,\n"
    "                        int act, float aa, float ab) {\n"
    "  p += po;\n"
    "  int c = p[0], ih = p[1], iw = p[2], m = p[3], oh = p[4], ow = p[5], kh = p[6], kw = p[7];\n"
    "  int sh = p[8], sw = p[9], ph = p[10], pw = p[11], dh = p[12], dw = p[13], group = p[14];\n"
    "  int pix = get_global_id(0), oc = get_global_id(1), n = get_global_id(2);\n"
    "  if (pix >= oh * ow || oc >= m) return;\n"
    "  int ox = pix % ow, oy = pix / ow;\n"
    "  int cg = c / group, g = oc / (m / group);\n"
    "  __global const TI_S *px = x + xo + ((size_t)n * c + (size_t)g * cg) * ih * iw;\n"
    "  __global const TI_S *pw_ = w + wo + (size_t)oc * cg * kh * kw;\n"
    "  int y0 = oy * sh - ph, x0 = ox * sw - pw;\n"
    "  float acc = has_bias ? TI_LD(bias, bo + oc) : 0.0f;\n"
    "  for (int ci = 0; ci < cg; ci++) {\n"
    "    __global const TI_S *pc = px + (size_t)ci * ih * iw;\n"
    "    __global const TI_S *wc = pw_ + ci * kh * kw;\n"
    "    for (int fy = 0; fy < kh; fy++) {\n"
    "      int iy = y0 + fy * dh;\n"
    "      if (iy < 0 || iy >= ih) continue;\n"
    "      for (int fx = 0; fx < kw; fx++) {\n"
    "        int ix = x0 + fx * dw;\n"
    "        if (ix < 0 || ix >= iw) continue;\n"
    "        acc = TI_MAD(acc, TI_LD(pc, iy * iw + ix), TI_LD(wc, fy * kw + fx));\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "  TI_ST(y, yo + ((size_t)n * m + oc) * oh * ow + pix, ti_act(acc, act, aa, ab));\n"
    "}\n",
    /* depthwise (group == c == m): one output element a work item, taps unrolled by the
     * compiler for the usual 3x3 / 5x5 */
    "__kernel void ti_dwconv2d(__global const TI_S *x, int xo, __global const TI_S *w, int wo,\n"
    "                          __global const TI_S *bias, int bo, int has_bias,\n"
    "                          __global TI_S *y, int yo, __global const int *p, int po,\n"
    "                          int act, float aa, float ab) {\n"
    "  p += po;\n"
    "  int c = p[0], ih = p[1], iw = p[2], oh = p[4], ow = p[5], kh = p[6], kw = p[7];\n"
    "  int sh = p[8], sw = p[9], ph = p[10], pw = p[11], dh = p[12], dw = p[13];\n"
    "  int pix = get_global_id(0), ch = get_global_id(1), n = get_global_id(2);\n"
    "  if (pix >= oh * ow || ch >= c) return;\n"
    "  int ox = pix % ow, oy = pix / ow;\n"
    "  __global const TI_S *pc = x + xo + ((size_t)n * c + ch) * ih * iw;\n"
    "  __global const TI_S *wc = w + wo + (size_t)ch * kh * kw;\n"
    "  int y0 = oy * sh - ph, x0 = ox * sw - pw;\n"
    "  float acc = has_bias ? TI_LD(bias, bo + ch) : 0.0f;\n"
    "  for (int fy = 0; fy < kh; fy++) {\n"
    "    int iy = y0 + fy * dh;\n"
    "    if (iy < 0 || iy >= ih) continue;\n"
    "    for (int fx = 0; fx < kw; fx++) {\n"
    "      int ix = x0 + fx * dw;\n"
    "      if (ix < 0 || ix >= iw) continue;\n"
    "      acc = TI_MAD(acc, TI_LD(pc, iy * iw + ix), TI_LD(wc, fy * kw + fx));\n"
    "    }\n"
    "  }\n"
    "  TI_ST(y, yo + ((size_t)n * c + ch) * oh * ow + pix, ti_act(acc, act, aa, ab));\n"
    "}\n",
    "#define CG_T 32\n#define CG_TS 5\n#define CG_R 4\n#define CG_NAME ti_conv_gemm\n",
    TI__CL_SRC_CONV_GEMM,
    "#undef CG_T\n#undef CG_TS\n#undef CG_R\n#undef CG_NAME\n",
    /* the split-K sum: one output element a work item; global (m * P, batch) */
    "__kernel void ti_conv_splitk(__global const float *part, __global const TI_S *bias, int bo,\n"
    "                             int has_bias, __global TI_S *y, int yo, int m, int P, int S,\n"
    "                             int act, float aa, float ab) {\n"
    "  int i = get_global_id(0), b = get_global_id(1);\n"
    "  if (i >= m * P) return;\n"
    "  float acc = has_bias ? TI_LD(bias, bo + i / P) : 0.0f;\n"
    "  __global const float *pp = part + (size_t)b * S * m * P + i;\n"
    "  for (int s = 0; s < S; s++) acc += pp[(size_t)s * m * P];\n"
    "  TI_ST(y, yo + (size_t)b * m * P + i, ti_act(acc, act, aa, ab));\n"
    "}\n",
    NULL};

/* The conv GEMM's other block sizes (see TI__CL_SRC_CONV_GEMM): a program of their own, so
 * a session without a tuning file that asks for them never compiles them. */
static const char *const ti__cl_src_conv_tiles[] = {
    "#define CG_T 16\n#define CG_TS 4\n#define CG_R 2\n#define CG_NAME ti_conv_gemm_t16\n",
    TI__CL_SRC_CONV_GEMM,
    "#undef CG_T\n#undef CG_TS\n#undef CG_R\n#undef CG_NAME\n",
    "#define CG_T 64\n#define CG_TS 6\n#define CG_R 8\n#define CG_NAME ti_conv_gemm_t64\n",
    TI__CL_SRC_CONV_GEMM,
    "#undef CG_T\n#undef CG_TS\n#undef CG_R\n#undef CG_NAME\n",
    NULL};

/* Matrix products: C[b] = act(alpha * A[b] B[b] + bias), A and B addressed through
 * strides (so transposes cost nothing), batch offsets from a table. Bias: element
 * (i, j) at bias[i * bsm + j * bsn] times beta (strides 0 broadcast). ti_matmul_t uses
 * TI_T x TI_T tiles in local memory (local size must be TI_T x TI_T); ti_matmul is the
 * plain form that runs with any local size. */
#define TI__CL_MM_ARGS                                                                          \
    "__global const TI_S *a, int ao, __global const TI_S *b, int bo,\n"                        \
    "  __global const TI_S *bias, int co, int has_bias, __global TI_S *y, int yo,\n"            \
    "  __global const int *p, int po, int M, int N, int K, int sam, int sak, int sbk, int sbn,\n" \
    "  int bsm, int bsn, float alpha, float beta, int act, float aa, float ab"
static const char *const ti__cl_src_gemm[] = {

    "__kernel void ti_matmul(" TI__CL_MM_ARGS ") {\n"
    "  int j = get_global_id(0), i = get_global_id(1), t = get_global_id(2);\n"
    "  if (i >= M || j >= N) return;\n"
    "  p += po + 3 * t;\n"
    "  __global const TI_S *pa = a + ao + p[0] + (size_t)i * sam;\n"
    "  __global const TI_S *pb = b + bo + p[1] + (size_t)j * sbn;\n"
    "  float acc = 0.0f;\n"
    "  for (int k = 0; k < K; k++) acc = TI_MAD(acc, TI_LD(pa, (size_t)k * sak), TI_LD(pb, (size_t)k * sbk));\n"
    "  acc *= alpha;\n"
    "  if (has_bias) acc += beta * TI_LD(bias, co + i * bsm + j * bsn);\n"
    "  TI_ST(y, yo + p[2] + (size_t)i * N + j, ti_act(acc, act, aa, ab));\n"
    "}\n"
    /* few rows, deep k (a classifier's matrix-vector product): a group of 64 items per
     * output element, each summing every 64th k, then a tree sum in local memory;
     * global (N * 64, M, batches), local (64, 1, 1) */
    "__kernel __attribute__((reqd_work_group_size(64, 1, 1)))\n"
    "void ti_gemv(" TI__CL_MM_ARGS ") {\n"
    "  __local float red[64];\n"
    "  int l = get_local_id(0), j = get_group_id(0), i = get_global_id(1), t = get_global_id(2);\n"
    "  p += po + 3 * t;\n"
    "  __global const TI_S *pa = a + ao + p[0] + (size_t)i * sam;\n"
    "  __global const TI_S *pb = b + bo + p[1] + (size_t)j * sbn;\n"
    "  float acc = 0.0f;\n"
    "  if (i < M && j < N)\n"
    "    for (int k = l; k < K; k += 64) acc = fma(TI_LD(pa, (size_t)k * sak), TI_LD(pb, (size_t)k * sbk), acc);\n"
    "  red[l] = acc;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (int h = 32; h > 0; h >>= 1) {\n"
    "    if (l < h) red[l] += red[l + h];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  if (l != 0 || i >= M || j >= N) return;\n"
    "  float v = red[0] * alpha;\n"
    "  if (has_bias) v += beta * TI_LD(bias, co + i * bsm + j * bsn);\n"
    "  TI_ST(y, yo + p[2] + (size_t)i * N + j, ti_act(v, act, aa, ab));\n"
    "}\n"
    "#ifndef TI_T\n#define TI_T 16\n#endif\n"
    "#define TI_W 4\n",
    /* each work item computes TI_W outputs along j: work-group TI_T x TI_T covers a
     * TI_T rows x (TI_T * TI_W) columns block of C */
    "__kernel __attribute__((reqd_work_group_size(TI_T, TI_T, 1)))\n"
    "void ti_matmul_t(" TI__CL_MM_ARGS ") {\n"
    "  __local TI_C ta[TI_T][TI_T + 1];\n"
    "  __local TI_C tb[TI_T][TI_T * TI_W + 1];\n"
    "  int lj = get_local_id(0), li = get_local_id(1), t = get_global_id(2);\n"
    "  int i = get_group_id(1) * TI_T + li, j0 = get_group_id(0) * TI_T * TI_W;\n"
    "  p += po + 3 * t;\n"
    "  __global const TI_S *pa = a + ao + p[0];\n"
    "  __global const TI_S *pb = b + bo + p[1];\n"
    "  float acc[TI_W];\n"
    "  for (int w = 0; w < TI_W; w++) acc[w] = 0.0f;\n"
    "  for (int k0 = 0; k0 < K; k0 += TI_T) {\n"
    "    int ka = k0 + lj;\n"
    "    ta[li][lj] = (i < M && ka < K) ? TI_LD(pa, (size_t)i * sam + (size_t)ka * sak) : 0.0f;\n"
    "    for (int w = 0; w < TI_W; w++) {\n"
    "      int jj = j0 + w * TI_T + lj, kb = k0 + li;\n"
    "      tb[li][w * TI_T + lj] = (jj < N && kb < K) ? TI_LD(pb, (size_t)kb * sbk + (size_t)jj * sbn) : 0.0f;\n"
    "    }\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (int k = 0; k < TI_T; k++) {\n"
    "      TI_C av = ta[li][k];\n"
    "      for (int w = 0; w < TI_W; w++) acc[w] = TI_MAD(acc[w], av, tb[k][w * TI_T + lj]);\n"
    "    }\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  if (i >= M) return;\n"
    "  for (int w = 0; w < TI_W; w++) {\n"
    "    int j = j0 + w * TI_T + lj;\n"
    "    if (j >= N) continue;\n"
    "    float v = acc[w] * alpha;\n"
    "    if (has_bias) v += beta * TI_LD(bias, co + i * bsm + j * bsn);\n"
    "    TI_ST(y, yo + p[2] + (size_t)i * N + j, ti_act(v, act, aa, ab));\n"
    "  }\n"
    "}\n",
    NULL};

/* 8-bit TFLite kernels (uint8 per-tensor, int8 per-channel): integer arithmetic bit for bit
 * as the CPU's (core/qmath.c, cpu/tfl_conv.c, cpu/tfl_elementwise.c, cpu/tfl_pool.c), so
 * the outputs are the same bytes. Tensors are byte buffers with byte offsets; parameter
 * tables are int32. Sums are taken modulo 2^32 (uint), as TFLite's int32 accumulators. */
static const char *const ti__cl_src_quant[] = {
    "/* a stored byte as int: sign-extended when s (int8) */\n"
    "int ti_q_ld(__global const uchar *p, size_t i, int s) {\n"
    "  int v = p[i];\n"
    "  return s ? (v ^ 0x80) - 0x80 : v;\n"
    "}\n"
    "int ti_q_srdhm(int a, int b) {\n"
    "  if (a == b && a == INT_MIN) return INT_MAX;\n"
    "  long ab = (long)a * (long)b;\n"
    "  long nudge = ab >= 0 ? (1L << 30) : (1L - (1L << 30));\n"
    "  return (int)((ab + nudge) / (1L << 31));\n"
    "}\n"
    "int ti_q_rdbypot(int x, int e) {\n"
    "  if (e <= 0) return x;\n"
    "  int mask = (int)((1L << e) - 1);\n"
    "  int rem = x & mask;\n"
    "  int thr = (mask >> 1) + (x < 0 ? 1 : 0);\n"
    "  return (x >> e) + (rem > thr ? 1 : 0);\n"
    "}\n"
    "/* MultiplyByQuantizedMultiplier, shift in [-31, 31] */\n"
    "int ti_q_mul(int x, int m, int shift) {\n"
    "  int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;\n"
    "  long s = (long)x * (1L << left);\n"
    "  s = s > (long)INT_MAX ? (long)INT_MAX : (s < (long)INT_MIN ? (long)INT_MIN : s);\n"
    "  return ti_q_rdbypot(ti_q_srdhm((int)s, m), right);\n"
    "}\n"
    "int ti_q_clamp(long v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : (int)v); }\n",

    "/* CONV_2D (groups, dilation) and DEPTHWISE_CONV_2D on NHWC, one output element per item:\n"
    " * dim 0 the output channel, dim 1 the output pixel. Table p: 0 n, 1 ih, 2 iw, 3 ic, 4 oh,\n"
    " * 5 ow, 6 oc, 7 kh, 8 kw, 9 kc, 10 sh, 11 sw, 12 dh, 13 dw, 14 ph, 15 pw, 16 opg (conv) or\n"
    " * channel multiplier (depthwise), 17 signed, 18 input offset (-zp), 19 weights offset,\n"
    " * 20 output zero point, 21 lo, 22 hi; from 24: multipliers [oc], then shifts [oc]. */\n"
    "#define TI_QCONV_ARGS __global const uchar *x, int xo, __global const uchar *w, int wo, \\\n"
    "  __global const int *bias, int bo, int has_bias, __global uchar *y, int yo, __global const int *pt, int po\n"
    "/* output pixel pix of the conv table p: its batch and the input corner of its window */\n"
    "void ti_q_pix(__global const int *p, int pix, int *n, int *iy0, int *ix0) {\n"
    "  int ox = pix % p[5], t = pix / p[5];\n"
    "  *n = t / p[4];\n"
    "  *iy0 = (t % p[4]) * p[10] - p[14];\n"
    "  *ix0 = ox * p[11] - p[15];\n"
    "}\n"
    "void ti_q_out(__global uchar *y, size_t yi, uint acc, __global const int *p, int c) {\n"
    "  int oc = p[6];\n"
    "  int v = ti_q_mul(as_int(acc), p[24 + c], p[24 + oc + c]);\n"
    "  y[yi] = (uchar)ti_q_clamp((long)v + p[20], p[21], p[22]);\n"
    "}\n"
    "__kernel void ti_qconv(TI_QCONV_ARGS) {\n"
    "  __global const int *p = pt + po;\n"
    "  int c = get_global_id(0), pix = get_global_id(1);\n"
    "  int oh = p[4], ow = p[5], oc = p[6];\n"
    "  if (c >= oc || pix >= p[0] * oh * ow) return;\n"
    "  int ih = p[1], iw = p[2], ic = p[3], kh = p[7], kw = p[8], kc = p[9], s = p[17];\n"
    "  int xoff = p[18], woff = p[19];\n"
    "  int n, iy0, ix0;\n"
    "  ti_q_pix(p, pix, &n, &iy0, &ix0);\n"
    "  int xc = (c / p[16]) * kc;\n"
    "  uint acc = 0;\n"
    "  for (int fy = 0; fy < kh; fy++) {\n"
    "    int iy = iy0 + fy * p[12];\n"
    "    if (iy < 0 || iy >= ih) continue;\n"
    "    for (int fx = 0; fx < kw; fx++) {\n"
    "      int ix = ix0 + fx * p[13];\n"
    "      if (ix < 0 || ix >= iw) continue;\n"
    "      __global const uchar *xr = x + xo + ((size_t)(n * ih + iy) * iw + ix) * ic + xc;\n"
    "      __global const uchar *wr = w + wo + ((size_t)(c * kh + fy) * kw + fx) * kc;\n"
    "      int k = 0;\n"
    "      if (s) {\n"
    "        for (; k + 4 <= kc; k += 4) {\n"
    "          int4 a = convert_int4(as_char4(vload4(0, xr + k))) + xoff;\n"
    "          int4 b = convert_int4(as_char4(vload4(0, wr + k))) + woff;\n"
    "          int4 m = a * b;\n"
    "          acc += (uint)m.x + (uint)m.y + (uint)m.z + (uint)m.w;\n"
    "        }\n"
    "      } else {\n"
    "        for (; k + 4 <= kc; k += 4) {\n"
    "          int4 a = convert_int4(vload4(0, xr + k)) + xoff;\n"
    "          int4 b = convert_int4(vload4(0, wr + k)) + woff;\n"
    "          int4 m = a * b;\n"
    "          acc += (uint)m.x + (uint)m.y + (uint)m.z + (uint)m.w;\n"
    "        }\n"
    "      }\n"
    "      for (; k < kc; k++)\n"
    "        acc += (uint)((ti_q_ld(wr, k, s) + woff) * (ti_q_ld(xr, k, s) + xoff));\n"
    "    }\n"
    "  }\n"
    "  if (has_bias) acc += (uint)bias[bo + c];\n"
    "  ti_q_out(y, (size_t)yo + (size_t)pix * oc + c, acc, p, c);\n"
    "}\n",

    "__kernel void ti_qdwconv(TI_QCONV_ARGS) {\n"
    "  __global const int *p = pt + po;\n"
    "  int c = get_global_id(0), pix = get_global_id(1);\n"
    "  int oh = p[4], ow = p[5], oc = p[6];\n"
    "  if (c >= oc || pix >= p[0] * oh * ow) return;\n"
    "  int ih = p[1], iw = p[2], ic = p[3], kh = p[7], kw = p[8], s = p[17];\n"
    "  int xoff = p[18], woff = p[19];\n"
    "  int n, iy0, ix0;\n"
    "  ti_q_pix(p, pix, &n, &iy0, &ix0);\n"
    "  int xc = c / p[16];\n"
    "  uint acc = 0;\n"
    "  for (int fy = 0; fy < kh; fy++) {\n"
    "    int iy = iy0 + fy * p[12];\n"
    "    if (iy < 0 || iy >= ih) continue;\n"
    "    for (int fx = 0; fx < kw; fx++) {\n"
    "      int ix = ix0 + fx * p[13];\n"
    "      if (ix < 0 || ix >= iw) continue;\n"
    "      size_t xi = (size_t)xo + ((size_t)(n * ih + iy) * iw + ix) * ic + xc;\n"
    "      size_t wi = (size_t)wo + (size_t)(fy * kw + fx) * oc + c;\n"
    "      acc += (uint)((ti_q_ld(w, wi, s) + woff) * (ti_q_ld(x, xi, s) + xoff));\n"
    "    }\n"
    "  }\n"
    "  if (has_bias) acc += (uint)bias[bo + c];\n"
    "  ti_q_out(y, (size_t)yo + (size_t)pix * oc + c, acc, p, c);\n"
    "}\n",

    "/* 8-bit ADD, as cpu/tfl_elementwise.c's ti__tfl_bin_q8: each input byte's rescaled term\n"
    " * from the tables (p[8..519] the first input's, scalar form then vector form; p[520..1031]\n"
    " * the second's). Element i takes TFLite's vector-loop rounding when i % row < vec_end.\n"
    " * p: 0 row (0: none), 1 unsigned output, 2 vec_end, 3 output multiplier, 4 its shift,\n"
    " * 5 output zero point, 6 lo, 7 hi; 1032 rank r (0: same shapes), then dims [r] and the\n"
    " * two inputs' broadcast strides [r] each. */\n"
    "__kernel void ti_qadd(__global const uchar *a, int ao, __global const uchar *b, int bo,\n"
    "                      __global uchar *y, int yo, __global const int *pt, int po, int n) {\n"
    "  __global const int *p = pt + po;\n"
    "  int i = get_global_id(0);\n"
    "  if (i >= n) return;\n"
    "  int ia = i, ib = i, r = p[1032];\n"
    "  if (r > 0) {\n"
    "    int rem = i;\n"
    "    ia = ib = 0;\n"
    "    for (int d = r - 1; d >= 0; d--) {\n"
    "      int dim = p[1033 + d], at = rem % dim;\n"
    "      rem /= dim;\n"
    "      ia += at * p[1033 + r + d];\n"
    "      ib += at * p[1033 + 2 * r + d];\n"
    "    }\n"
    "  }\n"
    "  int vec = p[0] > 0 && i % p[0] < p[2];\n"
    "  int sx = p[8 + vec * 256 + a[ao + ia]], sy = p[520 + vec * 256 + b[bo + ib]];\n"
    "  int sum = as_int((uint)sx + (uint)sy), v;\n"
    "  if (vec) {\n"
    "    int r = ti_q_rdbypot(ti_q_srdhm(sum, p[3]), -p[4]);\n"
    "    int s16 = (short)(ushort)((uint)r + (uint)p[5]);\n"
    "    v = p[1] ? clamp(s16, 0, 255) : clamp(s16, -128, 127);\n"
    "    v = clamp(v, p[6], p[7]);\n"
    "  } else {\n"
    "    int sh = p[4] < -31 ? -31 : (p[4] > 31 ? 31 : p[4]);\n"
    "    v = ti_q_clamp((long)ti_q_mul(sum, p[3], sh) + p[5], p[6], p[7]);\n"
    "  }\n"
    "  y[yo + i] = (uchar)v;\n"
    "}\n",

    "/* AVERAGE_POOL_2D / MAX_POOL_2D on 8-bit NHWC: dim 0 the channel, dim 1 the output pixel.\n"
    " * p: 0 n, 1 ih, 2 iw, 3 c, 4 oh, 5 ow, 6 fh, 7 fw, 8 sh, 9 sw, 10 ph, 11 pw, 12 signed,\n"
    " * 13 max (else average), 14 lo, 15 hi. */\n"
    "__kernel void ti_qpool(__global const uchar *x, int xo, __global uchar *y, int yo,\n"
    "                       __global const int *pt, int po) {\n"
    "  __global const int *p = pt + po;\n"
    "  int c = get_global_id(0), pix = get_global_id(1);\n"
    "  int C = p[3], oh = p[4], ow = p[5];\n"
    "  if (c >= C || pix >= p[0] * oh * ow) return;\n"
    "  int ih = p[1], iw = p[2], s = p[12], mx = p[13];\n"
    "  int ox = pix % ow, t = pix / ow, oy = t % oh, n = t / oh;\n"
    "  int iy0 = oy * p[8] - p[10], ix0 = ox * p[9] - p[11];\n"
    "  int fy0 = max(0, -iy0), fy1 = min(p[6], ih - iy0), fx0 = max(0, -ix0), fx1 = min(p[7], iw - ix0);\n"
    "  int acc = mx ? p[14] : 0;\n"
    "  for (int fy = fy0; fy < fy1; fy++)\n"
    "    for (int fx = fx0; fx < fx1; fx++) {\n"
    "      int v = ti_q_ld(x, (size_t)xo + ((size_t)(n * ih + iy0 + fy) * iw + ix0 + fx) * C + c, s);\n"
    "      acc = mx ? max(acc, v) : acc + v;\n"
    "    }\n"
    "  if (!mx) {\n"
    "    int cnt = (fx1 > fx0 && fy1 > fy0) ? (fx1 - fx0) * (fy1 - fy0) : 1;\n"
    "    acc = acc > 0 ? (acc + cnt / 2) / cnt : (acc - cnt / 2) / cnt;\n"
    "  }\n"
    "  y[(size_t)yo + (size_t)pix * C + c] = (uchar)clamp(acc, p[14], p[15]);\n"
    "}\n"
    "/* bytes as they are (RESHAPE and friends of non-float tensors) */\n"
    "__kernel void ti_copy_bytes(__global const uchar *x, int xo, __global uchar *y, int yo, int n) {\n"
    "  int i = get_global_id(0);\n"
    "  if (i < n) y[yo + i] = x[xo + i];\n"
    "}\n",
    NULL};

#endif /* TI_NO_OPENCL */

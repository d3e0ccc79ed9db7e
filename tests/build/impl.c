/* Compile check: the implementation translation unit and nothing else, so `nm` on its
 * object lists exactly what tinyinfer exports. The header is included once before the
 * implementation and twice after it: the include guard and the implementation guard
 * are separate, and neither may break when the header is included again. */
#include "tinyinfer.h"
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#include "tinyinfer.h"

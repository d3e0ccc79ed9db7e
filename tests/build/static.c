/* Compile check: TI_STATIC makes every API function static, so the implementation may
 * live in several translation units of one program (each its own private copy) and
 * nothing is exported. Built with -Wall -Wextra -Werror: functions it leaves unused must
 * not warn. */
#define TI_STATIC
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"

#include <string.h>

int main(void) {
    return strcmp(ti_status_string(TI_ERR_BAD_MODEL), "bad model") == 0 ? 0 : 1;
}

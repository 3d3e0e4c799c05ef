/* SPDX-License-Identifier: Apache-2.0 */
#include "base/macros.h"

void dp_remove_at(void *array, size_t *n, size_t i, size_t elem_size) {
        char *a = array;
        memmove(a + i * elem_size, a + (i + 1) * elem_size, (*n - i - 1) * elem_size);
        (*n)--;
}

int dp_grow(void **array, size_t *allocated, size_t need, size_t elem_size) {
        if (need <= *allocated) return 0;
        size_t n = *allocated ? *allocated : 4;
        while (n < need) {
                if (n > SIZE_MAX / 2) return -ENOMEM;
                n *= 2;
        }
        return dp_extend(array, allocated, n, elem_size);
}

int dp_extend(void **array, size_t *n, size_t need, size_t elem_size) {
        if (need <= *n) return 0;
        size_t bytes;
        if (dp_mul_overflow(need, elem_size, &bytes)) return -ENOMEM;
        void *p = realloc(*array, bytes);
        if (!p) return -ENOMEM;
        memset((char *)p + *n * elem_size, 0, (need - *n) * elem_size);
        *array = p;
        *n = need;
        return 0;
}

# SPDX-License-Identifier: Apache-2.0
# Fail each allocation of the string helpers in turn (see base/failmalloc.c).
dp_failmalloc_test(base)

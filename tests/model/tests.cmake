# SPDX-License-Identifier: Apache-2.0
# Fail each allocation of a decode/validate/encode/expand scenario in turn
# (see model/failmalloc.c).
dp_failmalloc_test(model)

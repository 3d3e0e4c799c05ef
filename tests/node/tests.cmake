# SPDX-License-Identifier: Apache-2.0
# Fail each allocation of the DRA manager's rescan and status and of the
# manifest decoding in turn (see node/failmalloc.c).
dp_failmalloc_test(node)

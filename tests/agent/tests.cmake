# SPDX-License-Identifier: Apache-2.0
# Fail each allocation of the agent's DRA request path in turn (see
# agent/failmalloc.c).
dp_failmalloc_test(agent)

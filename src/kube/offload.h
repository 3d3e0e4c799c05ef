/* SPDX-License-Identifier: Apache-2.0
 *
 * offload.h — one worker thread for pure work too long for a loop turn:
 * decoding a watch event of megabytes (kube/slices.c). The loop hands over
 * one job at a time (a copy of the bytes); the worker runs `work` on it,
 * which must touch nothing but its input and its result (no loop, no
 * logging, no shared state); `done` runs on the loop with the result. The
 * thread starts with the first job, and results reach the loop through an
 * eventfd source, so the loop never waits for the worker.
 *
 * Why a thread (DESIGN.md: "no threads without a measured reason"): the
 * document parser works on a whole line, and a 3.5 MiB event of 300,000
 * tiny keys, which the API server may legally send, took 200–400 ms of the
 * loop (docs/benchmarks.md, issue 21).
 */
#pragma once

#include "grpc/loop.h"

typedef struct dp_kube_offload dp_kube_offload;

/* On the worker, with the job's bytes (NUL-terminated) and tag. Returns
 * the result (NULL is a result too). */
typedef void *(*dp_kube_offload_work_fn)(const char *data, size_t len, uint64_t tag);
/* On the loop, once per job, in the order submitted, one per loop turn,
 * unless the offload was freed first: the result and the job's tag. done
 * owns the result. */
typedef void (*dp_kube_offload_done_fn)(void *result, uint64_t tag, void *userdata);
/* Frees a result that done will never see (its job's tag given). */
typedef void (*dp_kube_offload_free_fn)(void *result, uint64_t tag);

int dp_kube_offload_new(dp_loop *l, dp_kube_offload_work_fn work, dp_kube_offload_done_fn done,
                        dp_kube_offload_free_fn free_result, void *userdata, dp_kube_offload **ret);
/* Waits for a job in progress (one work call at most), frees what is left. */
dp_kube_offload *dp_kube_offload_free(dp_kube_offload *o);
DEFINE_FREEP(dp_kube_offload, dp_kube_offload_free)
/* Queues a copy of data as a job. The caller bounds how many it queues
 * (the publisher: one watch line, one answer). -ENOMEM, -EAGAIN (no thread
 * could be started: do the work on the loop). */
int dp_kube_offload_submit(dp_kube_offload *o, const char *data, size_t len, uint64_t tag);

/* SPDX-License-Identifier: Apache-2.0
 *
 * store.h — an in-process cluster store: the API server's object storage
 * with resourceVersion optimistic concurrency, and nothing else (no watch
 * streams, no admission). Pure: no clocks, files or globals.
 *
 * Objects are model/objects.h structs, owned by the store once added. Every
 * write (add, update, delete) bumps the store revision and stamps the written
 * object with it: that number is the object's resourceVersion. A write names
 * the resourceVersion it was based on; if the object changed since, the write
 * is rejected with -ESTALE and nothing is merged (the caller re-reads and
 * decides again). DP_STORE_ANY_RV skips the check (creation-like writes by a
 * single owner, such as the node agent publishing its own allocatable).
 *
 * Claim allocations go through dp_store_write_allocation(), which also
 * checks the device ledger: a device held by another claim's allocation
 * (without a shareID on both sides) makes the write fail with -EBUSY. This
 * is what keeps two schedulers with stale views from handing one device to
 * two claims (scenario 15): each claim's own resourceVersion alone could not,
 * since the two schedulers write different claims.
 *
 * Keys: (kind, namespace, name); cluster-scoped kinds use namespace "".
 * Namespaced kinds whose namespace is unset are stored under "default".
 * Listing is in insertion order, so everything derived is deterministic.
 */
#pragma once

#include "model/model.h"

#define DP_STORE_ANY_RV UINT64_MAX

typedef struct dp_store dp_store;

dp_store *dp_store_new(void);
dp_store *dp_store_free(dp_store *s);
DEFINE_FREEP(dp_store, dp_store_free)

/* Whether objects of the kind live in a namespace. */
bool dp_kind_namespaced(dp_kind k);
/* The namespace an object is stored under ("" or its namespace or "default"). */
const char *dp_store_ns_of(dp_object o);

/* Take ownership of obj on success (not on failure). -EEXIST if an object
 * with that key exists, -EINVAL without a name, -ENOMEM. */
int dp_store_add(dp_store *s, dp_object obj, uint64_t *ret_rv);
/* The object (hdr NULL when absent) and its resourceVersion. The pointer is
 * valid until the next write to that object. */
dp_object dp_store_get(const dp_store *s, dp_kind kind, const char *ns, const char *name, uint64_t *ret_rv);

/* Change an object in place: fn mutates it and returns 0, or a negative
 * errno to abandon the write (the object must then be unchanged). -ENOENT,
 * -ESTALE when expected_rv is not the current one. */
typedef int (*dp_store_mutate_fn)(dp_object obj, void *userdata);
int dp_store_update(dp_store *s, dp_kind kind, const char *ns, const char *name, uint64_t expected_rv,
                    dp_store_mutate_fn fn, void *userdata, uint64_t *ret_rv);
int dp_store_delete(dp_store *s, dp_kind kind, const char *ns, const char *name, uint64_t expected_rv);

/* Write status.allocation (taking ownership of alloc on success) and add
 * `consumer` to reservedFor, after the resourceVersion and ledger checks.
 * alloc NULL keeps the existing allocation and only adds the consumer.
 * -ESTALE, -EBUSY (a device is held by another claim; err names it),
 * -E2BIG (reservedFor full: 256), -ENOENT. */
int dp_store_write_allocation(dp_store *s, const char *ns, const char *name, uint64_t expected_rv,
                              dp_allocation_result *alloc, const dp_consumer_ref *consumer, uint64_t *ret_rv,
                              dp_error *err);
/* Drop `pod_uid`'s reservation; when none is left, deallocate (the
 * resourceclaim controller's job). Returns 1 if the claim was deallocated. */
int dp_store_release_claim(dp_store *s, const char *ns, const char *name, const char *pod_uid);

/* Iterate the live objects of a kind in insertion order: *i starts at 0. */
bool dp_store_next(const dp_store *s, dp_kind kind, size_t *i, dp_object *ret, uint64_t *ret_rv);
size_t dp_store_count(const dp_store *s, dp_kind kind);
uint64_t dp_store_revision(const dp_store *s);

/* ---- for caches kept across reads (the scheduler's) ----
 * Objects live in slots numbered from 0 that never move or get reused by
 * another key (a re-created object gets its old slot back). Every write
 * appends its slot to a change log; a reader keeps its own position (start
 * at 0) and visits each write after it. When the log could not grow,
 * dp_store_next_change sets *pos to SIZE_MAX and returns false: the reader
 * must rebuild from the objects and start again at dp_store_changes_end. */
bool dp_store_next_change(const dp_store *s, size_t *pos, size_t *ret_slot);
size_t dp_store_changes_end(const dp_store *s);
size_t dp_store_slots(const dp_store *s);
/* The slot's kind (DP_KIND_NONE past the end); *ret hdr NULL when deleted. */
dp_kind dp_store_slot(const dp_store *s, size_t slot, dp_object *ret, uint64_t *ret_rv);
/* The slot of a live object, SIZE_MAX when absent. */
size_t dp_store_slot_of(const dp_store *s, dp_kind kind, const char *ns, const char *name);

/* A borrowed list of every live object (kinds in `kinds`, or all when n is
 * 0), for libraries that read an object list (the allocator adapter). Free
 * with dp_store_view_free: it frees the array, not the objects. */
int dp_store_view(const dp_store *s, const dp_kind *kinds, size_t n_kinds, dp_object_list *ret);
void dp_store_view_free(dp_object_list *l);

#define DP_STORE_RESERVED_FOR_MAX 256 /* ResourceClaimReservedForMaxSize */

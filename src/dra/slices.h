/* SPDX-License-Identifier: Apache-2.0
 *
 * slices.h — a node's ResourceSlices from its DRA inventory (pure).
 *
 * One pool per node, named after the node. Counter sets go in slices of
 * their own (the 1.35+ shape: a slice holds devices or sharedCounters, never
 * both), at most DP_RESOURCE_SLICE_MAX_COUNTER_SETS per slice, first; devices
 * follow in inventory order, a slice holding at most
 * DP_RESOURCE_SLICE_MAX_DEVICES, or
 * DP_RESOURCE_SLICE_MAX_DEVICES_WITH_TAINTS_OR_CONSUMES_COUNTERS once one of
 * its devices has a taint or consumes counters. Slices are named
 * "<node>-<driver>-<k>" (k from 0), every slice carries the pool generation
 * and resourceSliceCount, and every slice is checked with
 * dp_object_validate() before it is returned, so the output is what the API
 * server would accept.
 *
 * Unhealthy devices get a taint "<driver>/<fault class>" whose effect the
 * policy names per class (NoSchedule by default; None publishes it as
 * information only; DP_DRA_TAINT_OFF publishes no taint). A recovered device
 * has no taint. Taints carry no timeAdded (no clock here: the API server
 * fills it).
 *
 * The publisher keeps the generation: it bumps it whenever the slices differ
 * from the last ones in anything but the generation, so a health change, a
 * new profile or a policy change gives a new generation and an identical
 * rebuild does not.
 */
#pragma once

#include "doc/doc.h"
#include "dra/inventory.h"
#include "model/model.h"

typedef enum {
        DP_DRA_TAINT_NO_SCHEDULE = 0,
        DP_DRA_TAINT_NO_EXECUTE,
        DP_DRA_TAINT_NONE, /* the device taint effect "None": informational */
        DP_DRA_TAINT_OFF,  /* no taint at all */
} dp_dra_taint_effect;

typedef struct dp_dra_taint_rule {
        const char *fault_class; /* "unhealthy", "xid-79", ... */
        dp_dra_taint_effect effect;
} dp_dra_taint_rule;

typedef struct dp_dra_slice_options {
        const dp_dra_taint_rule *rules; /* per fault class; others get default_effect */
        size_t n_rules;
        dp_dra_taint_effect default_effect;
        int64_t generation;
} dp_dra_slice_options;

#define DP_DRA_SLICE_OPTIONS_INIT                                                                                      \
        { NULL, 0, DP_DRA_TAINT_NO_SCHEDULE, 1 }

/* "NoSchedule" / "NoExecute" / "None" / "off"; parse accepts the same. */
const char *dp_dra_taint_effect_to_string(dp_dra_taint_effect e);
int dp_dra_taint_effect_from_string(const char *s, dp_dra_taint_effect *ret);

/* Build the slices. *ret is a new array of new slices (free with
 * dp_dra_slices_free). -EINVAL with the slice, device and rule in err when a
 * slice would not validate (e.g. a profile attribute name Kubernetes
 * refuses), -ENOMEM. */
int dp_dra_slices_build(const dp_dra_inventory *inv, const dp_dra_slice_options *o, dp_resource_slice ***ret,
                        size_t *ret_n, dp_error *err);
void dp_dra_slices_free(dp_resource_slice **v, size_t n);

/* Print slices: YAML documents separated by "---", or a JSON `List`. */
int dp_dra_slices_emit(dp_resource_slice *const *v, size_t n, dp_doc_format fmt, dp_strbuf *out);

/* Find a device of the pool (NULL if absent; ret_slice may be NULL). */
const dp_device *dp_dra_slices_find_device(dp_resource_slice *const *v, size_t n, const char *pool, const char *name,
                                           const dp_resource_slice **ret_slice);

typedef struct dp_dra_publisher dp_dra_publisher;

/* first_generation: the generation of the first publication (>= 1; a
 * daemon restarting after publishing generation g passes g + 1). */
dp_dra_publisher *dp_dra_publisher_new(int64_t first_generation);
dp_dra_publisher *dp_dra_publisher_free(dp_dra_publisher *p);
DEFINE_FREEP(dp_dra_publisher, dp_dra_publisher_free)
/* Rebuild from inv (o->generation is ignored). Returns 1 when the slices
 * changed (and the generation was bumped, except on the first call), 0 when
 * they are the same as before, negative on error (old slices kept). */
int dp_dra_publisher_update(dp_dra_publisher *p, const dp_dra_inventory *inv, const dp_dra_slice_options *o,
                            dp_error *err);
dp_resource_slice *const *dp_dra_publisher_slices(const dp_dra_publisher *p, size_t *ret_n);
int64_t dp_dra_publisher_generation(const dp_dra_publisher *p);

/* I/O (slices-io.c): write each slice to "<dir>/<slice name>.yaml" (JSON
 * with DP_DOC_JSON_*: ".json") atomically, then remove this pool's files
 * "<node>-<driver>-<k>.<ext>" that are no longer published (a pool that
 * shrank). All slices must be of one pool. 0 or negative errno with err. */
int dp_dra_slices_write_dir(dp_resource_slice *const *v, size_t n, const char *dir, dp_doc_format fmt, dp_error *err);

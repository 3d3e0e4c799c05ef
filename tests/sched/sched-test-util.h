/* SPDX-License-Identifier: Apache-2.0
 * sched-test-util.h — objects from YAML into a store, for the sched tests. */
#pragma once

#include "harness.h"
#include "sched/sched.h"

/* Decode `yaml` and add every object to the store (the test fails on error). */
static inline void load(dp_store *st, const char *yaml) {
        dp_object_list *l = dp_object_list_new();
        dp_error err = DP_ERROR_INIT;
        ASSERT_TRUE(l);
        if (dp_model_decode_buffer(yaml, strlen(yaml), "test.yaml", l, &err) < 0) DP_FAIL("decode: %s", err.msg);
        for (size_t i = 0; i < l->n; i++)
                ASSERT_OK(dp_store_add(st, l->items[i], NULL));
        l->n = 0;
        dp_object_list_free(l);
}

static inline const char *pod_node(dp_store *st, const char *name) {
        dp_object o = dp_store_get(st, DP_KIND_POD, "default", name, NULL);
        return o.hdr ? o.pod->node_name : NULL;
}

static inline const char *pod_message(dp_sched *s, const char *name) {
        const dp_sched_pod_info *pi = dp_sched_pod(s, "default", name);
        return pi && pi->message ? pi->message : "";
}

#define NODE_GPU(name, n)                                                                                              \
        "apiVersion: v1\nkind: Node\nmetadata: {name: " name ", labels: {zone: " name "}}\n"                           \
        "status: {capacity: {example.com/gpu: \"" #n "\"}, allocatable: {example.com/gpu: \"" #n "\"}}\n---\n"

#define POD_GPU(name, n, extra)                                                                                        \
        "apiVersion: v1\nkind: Pod\nmetadata: {name: " name "}\nspec:\n" extra                                         \
        "  containers:\n  - name: c\n    image: x\n    resources: {limits: {example.com/gpu: " #n "}}\n---\n"

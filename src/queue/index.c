/* SPDX-License-Identifier: Apache-2.0
 *
 * index.c — one map for every lookup by name the queue makes (flavors,
 * LocalQueues, ClusterQueues, flavor-resources, workloads, priority
 * classes), so admission over thousands of queues and tens of thousands of
 * workloads does no scan per lookup. Keys are "<tag>\x1f<part>\x1f...", owned
 * here; values are pointers or index + 1. The first object of a name wins, as
 * the scans it replaces did.
 */
#include <stdarg.h>
#include <stdio.h>

#include "queue/queue-internal.h"

#define KEY_MAX 1100

static void key_of(char key[KEY_MAX], const char *fmt, va_list ap) {
        int n = vsnprintf(key, KEY_MAX, fmt, ap);
        if (n < 0) key[0] = 0;
}

int q_index_put(dp_queue *q, void *value, const char *fmt, ...) {
        if (!q->index && !(q->index = dp_hashmap_new())) return -ENOMEM;
        char key[KEY_MAX];
        va_list ap;
        va_start(ap, fmt);
        key_of(key, fmt, ap);
        va_end(ap);
        if (dp_hashmap_contains(q->index, key)) return 0;
        char **v = realloc(q->index_keys, (q->n_index_keys + 1) * sizeof(*v));
        if (!v) return -ENOMEM;
        q->index_keys = v;
        if (!(v[q->n_index_keys] = strdup(key))) return -ENOMEM;
        int r = dp_hashmap_put(q->index, v[q->n_index_keys], value);
        if (r < 0) {
                free(v[q->n_index_keys]);
                return r;
        }
        q->n_index_keys++;
        return 0;
}

void *q_index_get(const dp_queue *q, const char *fmt, ...) {
        if (!q->index) return NULL;
        char key[KEY_MAX];
        va_list ap;
        va_start(ap, fmt);
        key_of(key, fmt, ap);
        va_end(ap);
        return dp_hashmap_get(q->index, key);
}

void q_index_free(dp_queue *q) {
        q_drivers_free(q);
        q->index = dp_hashmap_free(q->index);
        for (size_t i = 0; i < q->n_index_keys; i++)
                free(q->index_keys[i]);
        free(q->index_keys);
        q->index_keys = NULL;
        q->n_index_keys = 0;
}

/* The Kueue objects by kind and name (namespace too for LocalQueues). */
int q_index_objects(dp_queue *q) {
        int r = 0;
        for (size_t i = 0; i < q->n_owned && r >= 0; i++) {
                dp_object o = q->owned[i];
                const dp_object_meta *m = &o.ext->meta;
                const char *name = m->name ? m->name : "";
                switch (dp_queue_kind(o)) {
                case DP_KQ_RESOURCE_FLAVOR: r = q_index_put(q, o.ext, "F\x1f%s", name); break;
                case DP_KQ_WORKLOAD_PRIORITY_CLASS: r = q_index_put(q, o.ext, "P\x1f%s", name); break;
                case DP_KQ_ADMISSION_CHECK: r = q_index_put(q, o.ext, "A\x1f%s", name); break; /* checks.c */
                case DP_KQ_LOCAL_QUEUE:
                        r = q_index_put(q, o.ext, "L\x1f%s\x1f%s", m->namespace && m->namespace[0] ? m->namespace : "default",
                                        name);
                        break;
                case DP_KQ_WORKLOAD:
                        r = q_index_put(q, o.ext, "O\x1f%s\x1f%s", m->namespace && m->namespace[0] ? m->namespace : "default",
                                        name);
                        break;
                default: break;
                }
        }
        return r;
}

int q_index_input(dp_queue *q, const dp_object_list *l) {
        int r = 0;
        for (size_t i = 0; i < l->n && r >= 0; i++) {
                dp_object o = l->items[i];
                if (o.hdr->kind == DP_KIND_NAMESPACE && o.ns->meta.name)
                        r = q_index_put(q, o.ns, "N\x1f%s", o.ns->meta.name);
                else if (o.hdr->kind == DP_KIND_PRIORITY_CLASS && o.priority_class->meta.name) {
                        r = q_index_put(q, o.priority_class, "K\x1f%s", o.priority_class->meta.name);
                        if (r >= 0 && o.priority_class->global_default) r = q_index_put(q, o.priority_class, "K\x1f");
                }
        }
        return r < 0 ? r : q_index_device_classes(q, l);
}

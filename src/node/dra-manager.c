/* SPDX-License-Identifier: Apache-2.0
 * The kubelet's DRA manager for `devplane node` (see dra-manager.h), the
 * glue (dra-internal.h): claims for the pods of the manifest directory,
 * prepare and unprepare with retries recorded in the node's DRA state,
 * the rescan, status with the CDI environment, life cycle. Drivers
 * (registration, health, List) are dra-plugins.c. Model side: this file must
 * not include devices/device.h. */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <inttypes.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "base/test-hooks.h"
#include "base/strv.h"
#include "doc/builder.h"
#include "dra/cdi.h"
#include "dra/prepare.h"
#include "grpc/grpc.h"
#include "model/model.h"
#include "node/ckpt.h"
#include "node/dra-internal.h"
#include "node/files.h"

/* The kubelet's deadline (wire-protocols.md 3.6). */
#define PREPARE_TIMEOUT_USEC (45ull * 1000 * 1000)
#define MAX_CLAIMS_PER_POD 128

uint64_t dra_backoff_usec(const dp_node_dra *d, unsigned attempt) {
        uint64_t ms = d->backoff_initial_ms;
        for (unsigned i = 1; i < attempt && ms < d->backoff_max_ms; i++)
                ms *= 2;
        return (ms < d->backoff_max_ms ? ms : d->backoff_max_ms) * 1000;
}

void dra_notify_changed(dp_node_dra *d) {
        if (d->changed) d->changed(d->userdata);
}

/* ---- claims ------------------------------------------------------------------------- */

claim_ent *dra_claim_find(dp_node_dra *d, const char *uid, const char *driver) {
        return dp_node_dra_state_find(d->st, uid, driver);
}

/* Save the node's DRA state: atomic and durable, next to the device
 * manager's checkpoint. 0 or a negative errno; a failure is logged once,
 * shown in the status and tried again on the next change or timer. */
int dra_state_save(dp_node_dra *d) {
        if (!d->state_dir) return 0;
        _cleanup_strbuf_ dp_strbuf sb = DP_STRBUF_INIT;
        dp_error e = DP_ERROR_INIT;
        int r = dp_state_file_marshal(&dp_node_dra_state_file, d->st, &sb, &e);
        if (r >= 0)
                r = node_write_state(d->state_dir, DP_NODE_DRA_STATE_FILE, sb.buf, sb.len, 0600, DP_WRITE_DURABLE, &e);
        if (r < 0) {
                if (!e.msg[0]) dp_error_set(&e, r, "%s/%s: %s", d->state_dir, DP_NODE_DRA_STATE_FILE, strerror(-r));
                if (!d->state_dirty) log_error("cannot save the node's DRA state: %s", dp_error_msg(&e));
                d->state_dirty = true;
                free(d->state_error);
                d->state_error = strdup(dp_error_msg(&e));
                return r;
        }
        if (d->state_dirty) log_info("node's DRA state saved again");
        d->state_dirty = false;
        free(d->state_error);
        d->state_error = NULL;
        return 0;
}

/* The state entry of claim c through driver for pod p: created as
 * "preparing" when new, the pod recorded. 1 when the state changed, 0 not,
 * -ENOMEM, -E2BIG. */
static int claim_track(dp_node_dra *d, const dp_resource_claim *c, const char *driver, const pod_ent *p,
                       claim_ent **ret) {
        claim_ent *e = NULL;
        int r = dp_node_dra_state_add(d->st, c->meta.uid, c->meta.namespace ? c->meta.namespace : "default",
                                      c->meta.name, driver, &e);
        bool added = r >= 0;
        if (r < 0 && r != -EEXIST) return r;
        r = dp_node_dra_claim_add_pod(e, p->uid, p->ns, p->name);
        if (r < 0) {
                if (added) dp_node_dra_state_remove(d->st, e);
                return r;
        }
        *ret = e;
        return added || r > 0;
}

static int write_claim_file(dp_node_dra *d, const dp_resource_claim *c) {
        if (!d->claims_dir) return 0;
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        if (!s) return -ENOMEM;
        dp_doc_node *root = dp_resource_claim_encode(s, c);
        if (!root) return -ENOMEM;
        _cleanup_strbuf_ dp_strbuf sb = DP_STRBUF_INIT;
        dp_doc_emit(&sb, root, DP_DOC_YAML);
        if (dp_strbuf_failed(&sb)) return -ENOMEM;
        const char *ns = c->meta.namespace ? c->meta.namespace : "default";
        _cleanup_free_ char *dir = dp_asprintf("%s/%s", d->claims_dir, ns);
        _cleanup_free_ char *name = dp_asprintf("%s.yaml", c->meta.name);
        if (!dir || !name) return -ENOMEM;
        (void)mkdir(d->claims_dir, 0750);
        (void)mkdir(dir, 0750);
        dp_error e = DP_ERROR_INIT;
        int r = dp_dra_file_write(dir, name, dp_strbuf_str(&sb), sb.len, 0644, &e);
        if (r < 0) log_error("claims directory: %s", e.msg[0] ? e.msg : strerror(-r));
        return r;
}

static void remove_claim_file(dp_node_dra *d, const claim_ent *c) {
        if (!d->claims_dir) return;
        for (size_t i = 0; i < d->st->n_claims; i++) /* another driver's entry of the same claim still needs it */
                if (&d->st->claims[i] != c && streq(d->st->claims[i].uid, c->uid)) return;
        _cleanup_free_ char *dir = dp_asprintf("%s/%s", d->claims_dir, c->ns);
        _cleanup_free_ char *name = dp_asprintf("%s.yaml", c->name);
        if (dir && name) (void)dp_dra_file_remove(dir, name, NULL);
}

/* ---- claims from templates (the resource-claim controller's part) ---------------------- */

static char *uuid_from(uint64_t h1, uint64_t h2) {
        return dp_asprintf("%08" PRIx32 "-%04" PRIx32 "-%04" PRIx32 "-%04" PRIx32 "-%012" PRIx64, (uint32_t)(h1 >> 32),
                           (uint32_t)(h1 >> 16) & 0xffff, (uint32_t)h1 & 0xffff, (uint32_t)(h2 >> 48),
                           (uint64_t)(h2 & 0xffffffffffffULL));
}

/* A UUID-shaped name derived from a key (FNV-1a, two lanes). */
static char *uuid_hash(const char *key) {
        uint64_t h1 = 0xcbf29ce484222325ULL, h2 = 0x84222325cbf29ce4ULL;
        for (const unsigned char *c = (const unsigned char *)key; *c; c++) {
                h1 = (h1 ^ *c) * 0x100000001b3ULL;
                h2 = (h2 ^ *c) * 0x100000001b3ULL + 0x9e3779b97f4a7c15ULL;
        }
        return uuid_from(h1, h2);
}

/* A random (version 4) UUID, as the API server gives a new object. */
static char *uuid_random(void) {
        uint8_t b[16];
        if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) return NULL;
        b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);
        b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
        uint64_t h1 = 0, h2 = 0;
        for (int i = 0; i < 8; i++) {
                h1 = h1 << 8 | b[i];
                h2 = h2 << 8 | b[8 + i];
        }
        return uuid_from(h1, h2);
}

/* Every ResourceClaim in <claims-dir>/<namespace>/ (what the node created
 * and what it wrote for the driver): the node's view of claims it owns. */
/* 0, or -ENOMEM: the directory could not be read whole (a claim missing
 * from it would look deleted). */
static int load_claims_dir(const dp_node_dra *d, dp_object_list *g) {
        if (!d->claims_dir) return 0;
        _cleanup_(closedir_safep) DIR *top = opendir(d->claims_dir);
        struct dirent *de;
        while (top && (de = readdir(top))) {
                if (de->d_name[0] == '.') continue;
                _cleanup_free_ char *nsdir = dp_asprintf("%s/%s", d->claims_dir, de->d_name);
                if (!nsdir) return -ENOMEM;
                _cleanup_(closedir_safep) DIR *dir = opendir(nsdir);
                struct dirent *fe;
                while (dir && (fe = readdir(dir))) {
                        size_t len = strlen(fe->d_name);
                        if (fe->d_name[0] == '.' || len <= 5 || !streq(fe->d_name + len - 5, ".yaml")) continue;
                        _cleanup_free_ char *path = dp_asprintf("%s/%s", nsdir, fe->d_name);
                        if (!path) return -ENOMEM;
                        dp_error e = DP_ERROR_INIT;
                        int r = dp_model_load_file(path, g, &e);
                        if (r == -ENOMEM) return r;
                        if (r < 0) log_debug("claims directory: %s skipped: %s", path, dp_error_msg(&e));
                }
        }
        return 0;
}

static bool owned_by(const dp_resource_claim *c, const char *kind, const char *name) {
        for (size_t i = 0; i < c->meta.n_owner_references; i++) {
                const dp_owner_ref *o = &c->meta.owner_references[i];
                if (o->kind && o->name && streq(o->kind, kind) && streq(o->name, name)) return true;
        }
        return false;
}

/* Create claim i of the pod from its template, as the resource-claim
 * controller does: spec from the template, labels and annotations from
 * its spec.metadata plus resource.kubernetes.io/pod-claim-name, a new uid,
 * the pod (or its PodGroup) as controlling owner. Written to the claims
 * directory, where `devplane allocate` finds it. */
static int create_claim(dp_node_dra *d, const pod_ent *p, size_t i, const dp_resource_claim_template *t) {
        _cleanup_free_ char *path = dp_asprintf("%s/%s/%s.yaml", d->claims_dir, p->ns, p->claim_names[i]);
        struct stat st;
        if (!path) return -ENOMEM;
        if (stat(path, &st) == 0) return 0; /* another pod of the group created it in this pass */
        dp_resource_claim c = {.hdr = {.kind = DP_KIND_RESOURCE_CLAIM}};
        c.spec = t->spec; /* shallow: encoded, never freed through c */
        c.meta.name = p->claim_names[i];
        c.meta.namespace = p->ns;
        _cleanup_free_ char *uid = uuid_random();
        _cleanup_free_ char *group_uid = NULL;
        dp_kv *ann = calloc(t->claim_meta.n_annotations + 1, sizeof *ann);
        if (!uid || !ann) {
                free(ann);
                return -ENOMEM;
        }
        c.meta.uid = uid;
        for (size_t k = 0; k < t->claim_meta.n_annotations; k++)
                ann[k] = t->claim_meta.annotations[k];
        ann[t->claim_meta.n_annotations] =
                (dp_kv){.key = (char *)"resource.kubernetes.io/pod-claim-name", .value = p->pod_claims[i]};
        c.meta.annotations = ann;
        c.meta.n_annotations = t->claim_meta.n_annotations + 1;
        c.meta.labels = t->claim_meta.labels;
        c.meta.n_labels = t->claim_meta.n_labels;
        dp_owner_ref own = {.api_version = (char *)"v1", .kind = (char *)"Pod", .name = p->name, .uid = p->uid,
                            .controller = true};
        if (p->owners[i] == OWNER_POD_GROUP) {
                _cleanup_free_ char *key = dp_asprintf("podgroup/%s/%s", p->ns, p->group);
                if (!key || !(group_uid = uuid_hash(key))) {
                        free(ann);
                        return -ENOMEM;
                }
                own = (dp_owner_ref){.api_version = (char *)"scheduling.k8s.io/v1alpha2", .kind = (char *)"PodGroup",
                                     .name = p->group, .uid = group_uid, .controller = true};
        }
        c.meta.owner_references = &own;
        c.meta.n_owner_references = 1;
        int r = write_claim_file(d, &c);
        free(ann);
        if (r >= 0)
                log_info("created ResourceClaim %s/%s (%s) from ResourceClaimTemplate %s for %s %s", p->ns,
                         p->claim_names[i], uid, t->meta.name, own.kind, own.name);
        return r;
}

/* The pod is gone: claims created for it alone go too (the garbage
 * collector's part); prepared ones are removed after their unprepare. */
static void delete_pod_claims(dp_node_dra *d, const pod_ent *p, const dp_object_list *g) {
        for (size_t i = 0; d->claims_dir && g && i < p->n_claims; i++) {
                if (p->owners[i] != OWNER_POD) continue;
                dp_object o = dp_object_list_find(g, DP_KIND_RESOURCE_CLAIM, p->ns, p->claim_names[i]);
                if (!o.hdr || !owned_by(o.claim, "Pod", p->name)) continue;
                bool prepared = false;
                for (size_t k = 0; k < d->st->n_claims && !prepared; k++)
                        prepared = o.claim->meta.uid && streq(d->st->claims[k].uid, o.claim->meta.uid);
                if (prepared) continue;
                _cleanup_free_ char *dir = dp_asprintf("%s/%s", d->claims_dir, p->ns);
                _cleanup_free_ char *name = dp_asprintf("%s.yaml", p->claim_names[i]);
                if (dir && name && dp_dra_file_remove(dir, name, NULL) >= 0)
                        log_info("deleted ResourceClaim %s/%s with its pod", p->ns, p->claim_names[i]);
        }
}

/* ---- prepare ---------------------------------------------------------------------------- */

static int call_driver(dp_node_dra *d, const plugin_ent *p, const char *method, const dp_resource_claim *const *claims,
                       const claim_ent *const *ents, size_t n, const ProtobufCMessageDescriptor *reply_type,
                       dp_grpc_reply *rep, dp_error *err) {
        pb_claim *pc = calloc(n + 1, sizeof *pc);
        pb_claim **pp = calloc(n + 1, sizeof *pp);
        int r = pc && pp ? 0 : -ENOMEM;
        for (size_t i = 0; r >= 0 && i < n; i++) {
                pc[i] = (pb_claim)K8S__IO__KUBELET__PKG__APIS__DRA__V1__CLAIM__INIT;
                if (claims) {
                        pc[i].namespace_ = claims[i]->meta.namespace ? claims[i]->meta.namespace : (char *)"default";
                        pc[i].name = claims[i]->meta.name;
                        pc[i].uid = claims[i]->meta.uid;
                } else {
                        pc[i].namespace_ = ents[i]->ns;
                        pc[i].name = ents[i]->name;
                        pc[i].uid = ents[i]->uid;
                }
                pp[i] = &pc[i];
        }
        _cleanup_(dp_grpc_channel_freep) dp_grpc_channel *ch = NULL;
        if (r >= 0 && (r = dp_grpc_channel_connect_unix(d->loop, p->endpoint, &ch)) < 0)
                dp_error_errno(err, r, "connect to %s", p->endpoint);
        _cleanup_free_ char *path = r >= 0 ? dp_asprintf("%s%s", p->prefix, method) : NULL;
        if (r >= 0 && !path) r = -ENOMEM;
        if (r >= 0) {
                /* The two requests have the same shape: claims = 1. */
                pb_prep_req req = K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_PREPARE_RESOURCES_REQUEST__INIT;
                pb_unprep_req ureq = K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_UNPREPARE_RESOURCES_REQUEST__INIT;
                req.claims = ureq.claims = pp;
                req.n_claims = ureq.n_claims = n;
                const ProtobufCMessage *m = claims ? &req.base : &ureq.base;
                d->prepare_calls++;
                d->in_call++;
                r = dp_grpc_channel_call_sync_msg(ch, path, m, reply_type, PREPARE_TIMEOUT_USEC, rep, err);
                d->in_call--;
        }
        dp_free_many(pc, pp);
        return r;
}

/* Prepare the claims of one driver for a pod. 0, or -errno with msg. */
static int prepare_driver(dp_node_dra *d, const char *driver, const dp_resource_claim *const *claims, size_t n,
                          char **msg) {
        const plugin_ent *p = dra_plugin_for(d, driver);
        if (!p) {
                *msg = dp_asprintf("DRA driver %s is not registered", driver);
                return -ENOENT;
        }
        _cleanup_grpc_reply_ dp_grpc_reply rep = DP_GRPC_REPLY_INIT;
        dp_error e = DP_ERROR_INIT;
        int r = call_driver(d, p, "NodePrepareResources", claims, NULL, n,
                            &k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__descriptor, &rep,
                            &e);
        if (r < 0) {
                *msg = dp_asprintf("NodePrepareResources failed for driver %s: %s", driver, dp_error_msg(&e));
                return r;
        }
        const pb_prep_resp *resp = (const pb_prep_resp *)rep.msg;
        /* Every claim must be answered, and nothing else (manager.go). */
        size_t answered = 0;
        for (size_t k = 0; k < resp->n_claims; k++) {
                bool known = false;
                for (size_t i = 0; i < n && !known; i++)
                        known = streq(resp->claims[k]->key, claims[i]->meta.uid);
                if (!known) {
                        *msg = dp_asprintf("NodePrepareResources returned result for unknown claim UID %s",
                                           resp->claims[k]->key);
                        return -EBADMSG;
                }
        }
        for (size_t i = 0; i < n; i++) {
                const K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourceResponse *one = NULL;
                bool found = false;
                for (size_t k = 0; k < resp->n_claims && !found; k++)
                        if (streq(resp->claims[k]->key, claims[i]->meta.uid)) {
                                found = true;
                                one = resp->claims[k]->value;
                        }
                if (!found) continue;
                answered++;
                if (one && one->error && *one->error) {
                        *msg = dp_asprintf("NodePrepareResources failed for ResourceClaim %s: %s", claims[i]->meta.name,
                                           one->error);
                        return -EREMOTEIO;
                }
        }
        if (answered < n) {
                *msg = dp_asprintf("NodePrepareResources skipped %zu ResourceClaims", n - answered);
                return -EAGAIN;
        }
        /* What the driver answered goes into the state entries (recorded as
         * preparing before the call), within the caps the state file keeps. */
        for (size_t i = 0; i < n; i++) {
                const K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourceResponse *one = NULL;
                for (size_t k = 0; k < resp->n_claims; k++)
                        if (streq(resp->claims[k]->key, claims[i]->meta.uid)) one = resp->claims[k]->value;
                size_t nd = one ? one->n_devices : 0;
                if (nd > DP_NODE_DRA_STATE_MAX_DEVICES) {
                        *msg = dp_asprintf("NodePrepareResources returned %zu devices for ResourceClaim %s (at most %d)",
                                           nd, claims[i]->meta.name, DP_NODE_DRA_STATE_MAX_DEVICES);
                        return -EBADMSG;
                }
                prep_dev devs[DP_NODE_DRA_STATE_MAX_DEVICES + 1];
                for (size_t k = 0; k < nd; k++) {
                        const K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Device *dv = one->devices[k];
                        if (dv->n_request_names > DP_NODE_DRA_STATE_MAX_STRINGS ||
                            dv->n_cdi_device_ids > DP_NODE_DRA_STATE_MAX_STRINGS) {
                                *msg = dp_asprintf("NodePrepareResources returned more than %d request names or CDI "
                                                   "ids for a device of ResourceClaim %s",
                                                   DP_NODE_DRA_STATE_MAX_STRINGS, claims[i]->meta.name);
                                return -EBADMSG;
                        }
                        devs[k] = (prep_dev){dv->pool_name, dv->device_name, dv->request_names, dv->n_request_names,
                                             dv->cdi_device_ids, dv->n_cdi_device_ids};
                }
                claim_ent *ce = dra_claim_find(d, claims[i]->meta.uid, driver);
                if (!ce) continue; /* cannot happen: recorded before the call */
                r = dp_node_dra_claim_set_devices(ce, devs, nd);
                if (r == -EINVAL)
                        *msg = dp_asprintf("NodePrepareResources answered ResourceClaim %s with a pool, device, request "
                                           "or CDI id the node cannot record (not UTF-8, or a control character)",
                                           claims[i]->meta.name);
                if (r < 0) return r == -EINVAL ? -EBADMSG : r;
                ce->phase = DP_NODE_DRA_PREPARED;
                ce->skip_unprepare = dp_dra_skip_node_operation(claims[i]->allocation, driver, DP_DRA_NODE_UNPREPARE);
                log_info("prepared ResourceClaim %s/%s (%s) through %s: %zu device(s)", ce->ns, ce->name, ce->uid,
                         driver, ce->n_devs);
        }
        return 0;
}

/* ---- pods ---------------------------------------------------------------------------------- */

static void pod_clear(pod_ent *p) {
        dp_free_many(p->ns, p->name, p->uid, p->group);
        dp_strv_free_n(p->templates, p->n_claims);
        free(p->owners);
        dp_strv_free_n(p->pod_claims, p->n_claims);
        dp_strv_free_n(p->claim_names, p->n_claims);
        dp_strv_free_n(p->claim_uids, p->n_claims);
        for (size_t i = 0; i < p->n_ctrs; i++) {
                free(p->ctrs[i].name);
                for (size_t k = 0; k < p->ctrs[i].n_claims; k++)
                        dp_free_many(p->ctrs[i].claims[k].pod_claim, p->ctrs[i].claims[k].request);
                free(p->ctrs[i].claims);
        }
        dp_free_many(p->ctrs, p->message);
}

/* The pod's uid: metadata.uid, else derived from namespace and name (a
 * static pod's uid is the kubelet's to choose). */
static char *pod_uid(const dp_pod *pod, const char *ns) {
        if (pod->meta.uid) return strdup(pod->meta.uid);
        _cleanup_free_ char *key = dp_asprintf("pod/%s/%s", ns, pod->meta.name);
        return key ? uuid_hash(key) : NULL;
}

/* Does the pod's PodGroup (v1alpha2 spec.resourceClaims) list the same
 * claim from the same template? Then the group's claim is used
 * (DRAWorkloadResourceClaims). */
static bool group_claim(const dp_object_list *l, const dp_pod *pod, const char *ns, const dp_pod_resource_claim *rc) {
        if (!l || !pod->scheduling_group || !rc->resource_claim_template_name) return false;
        dp_object o = dp_object_list_find(l, DP_KIND_POD_GROUP, ns, pod->scheduling_group);
        for (size_t i = 0; o.hdr && i < o.pod_group->n_resource_claims; i++) {
                const dp_pod_resource_claim *g = &o.pod_group->resource_claims[i];
                if (streq(g->name, rc->name) && g->resource_claim_template_name &&
                    streq(g->resource_claim_template_name, rc->resource_claim_template_name))
                        return true;
        }
        return false;
}

/* The pseudo pod-claim name of the claim the scheduler created for
 * extended resources (KEP-5004): not a valid DNS label, so it cannot meet a
 * real one. */
#define EXTENDED_CLAIM "@extended-resources"

static pod_ent *pod_get(dp_node_dra *d, const dp_pod *pod, const dp_object_list *l) {
        const char *ns = pod->meta.namespace ? pod->meta.namespace : "default";
        for (size_t i = 0; i < d->n_pods; i++)
                if (streq(d->pods[i].ns, ns) && streq(d->pods[i].name, pod->meta.name)) return &d->pods[i];
        pod_ent *v = realloc(d->pods, (d->n_pods + 1) * sizeof *v);
        if (!v) return NULL;
        d->pods = v;
        pod_ent *p = &d->pods[d->n_pods];
        *p = (pod_ent){.ns = strdup(ns), .name = strdup(pod->meta.name), .uid = pod_uid(pod, ns)};
        bool ext = pod->extended_resource_claim_name != NULL;
        size_t n = pod->n_resource_claims + ext;
        p->pod_claims = calloc(n + 1, sizeof(char *));
        p->claim_names = calloc(n + 1, sizeof(char *));
        p->claim_uids = calloc(n + 1, sizeof(char *));
        p->templates = calloc(n + 1, sizeof(char *));
        p->owners = calloc(n + 1, sizeof *p->owners);
        p->ctrs = calloc(pod->n_init_containers + pod->n_containers + 1, sizeof *p->ctrs);
        bool ok = p->ns && p->name && p->uid && p->pod_claims && p->claim_names && p->claim_uids && p->templates &&
                  p->owners && p->ctrs;
        p->n_claims = n;
        for (size_t i = 0; ok && i < pod->n_resource_claims; i++) {
                const dp_pod_resource_claim *rc = &pod->resource_claims[i];
                const char *cn = rc->resource_claim_name;
                for (size_t k = 0; !cn && k < pod->n_claim_statuses; k++)
                        if (streq(pod->claim_statuses[k].name, rc->name))
                                cn = pod->claim_statuses[k].resource_claim_name;
                p->pod_claims[i] = strdup(rc->name);
                if (cn)
                        p->claim_names[i] = strdup(cn);
                else if (group_claim(l, pod, ns, rc)) {
                        /* one claim per PodGroup: <group>-<podClaimName>, owned by the group */
                        p->claim_names[i] = dp_asprintf("%s-%s", pod->scheduling_group, rc->name);
                        p->owners[i] = OWNER_POD_GROUP;
                        if (!p->group && !(p->group = strdup(pod->scheduling_group))) ok = false;
                } else {
                        /* the resource-claim controller's claim: <pod>-<podClaimName>, owned by the pod */
                        p->claim_names[i] = dp_asprintf("%s-%s", pod->meta.name, rc->name);
                        p->owners[i] = OWNER_POD;
                }
                if (!cn && rc->resource_claim_template_name &&
                    !(p->templates[i] = strdup(rc->resource_claim_template_name)))
                        ok = false;
                ok = ok && p->pod_claims[i] && p->claim_names[i];
        }
        if (ok && ext) {
                p->pod_claims[n - 1] = strdup(EXTENDED_CLAIM);
                p->claim_names[n - 1] = strdup(pod->extended_resource_claim_name);
                ok = p->pod_claims[n - 1] && p->claim_names[n - 1];
        }
        /* init containers first, as they run */
        for (size_t i = 0; ok && i < pod->n_init_containers + pod->n_containers; i++) {
                const dp_container *c = i < pod->n_init_containers ? &pod->init_containers[i]
                                                                   : &pod->containers[i - pod->n_init_containers];
                ctr_ent *ce = &p->ctrs[p->n_ctrs++];
                ce->name = strdup(c->name);
                ce->claims = calloc(c->n_claims + pod->n_extended_resource_mappings + 1, sizeof *ce->claims);
                ok = ce->name && ce->claims;
                for (size_t k = 0; ok && k < c->n_claims; k++) {
                        ce->claims[k].pod_claim = strdup(c->claims[k].name);
                        ce->claims[k].request = c->claims[k].request ? strdup(c->claims[k].request) : NULL;
                        ok = ce->claims[k].pod_claim && (!c->claims[k].request || ce->claims[k].request);
                        ce->n_claims++;
                }
                /* extended resources: the container sees the devices of its mapped requests */
                for (size_t k = 0; ok && ext && k < pod->n_extended_resource_mappings; k++) {
                        const dp_extended_resource_mapping *m = &pod->extended_resource_mappings[k];
                        if (!m->container_name || !streq(m->container_name, c->name) || !m->request_name) continue;
                        ctr_claim *cc = &ce->claims[ce->n_claims++];
                        cc->pod_claim = strdup(EXTENDED_CLAIM);
                        cc->request = strdup(m->request_name);
                        ok = cc->pod_claim && cc->request;
                }
        }
        if (!ok) {
                pod_clear(p);
                return NULL;
        }
        d->n_pods++;
        return p;
}

static void pod_wait(dp_node_dra *d, pod_ent *p, char *msg, bool backoff) {
        if (!msg) return;
        if (!p->message || !streq(p->message, msg)) log_info("pod %s/%s waits: %s", p->ns, p->name, msg);
        free(p->message);
        p->message = msg;
        if (backoff) {
                p->attempts++;
                p->next_try = dp_loop_now() + dra_backoff_usec(d, p->attempts);
        }
}

/* Why claim i of the pod cannot be used yet: a new message, or NULL when it
 * resolves (*ret_claim set, the pod's claim uid recorded). 0 or -ENOMEM. */
static int pod_resolve_one(dp_node_dra *d, pod_ent *p, size_t i, const dp_object_list *l, const dp_object_list *g,
                           const dp_resource_claim **ret_claim, char **ret_why, bool *ret_backoff) {
        const char *cn = p->claim_names[i];
        dp_object o = dp_object_list_find(l, DP_KIND_RESOURCE_CLAIM, p->ns, cn);
        dp_object mine = g ? dp_object_list_find(g, DP_KIND_RESOURCE_CLAIM, p->ns, cn) : (dp_object){0};
        char *msg = NULL;
        *ret_backoff = false;
        if (p->owners[i] && o.hdr && mine.hdr && o.claim->meta.uid && mine.claim->meta.uid &&
            !streq(o.claim->meta.uid, mine.claim->meta.uid) &&
            owned_by(mine.claim, p->owners[i] == OWNER_POD ? "Pod" : "PodGroup",
                     p->owners[i] == OWNER_POD ? p->name : p->group))
                msg = dp_asprintf("ResourceClaim %s/%s was not created for this pod (uid %s; the node created %s)", p->ns,
                                  cn, o.claim->meta.uid, mine.claim->meta.uid);
        else if (!o.hdr && !mine.hdr && p->templates[i]) {
                dp_object t = dp_object_list_find(l, DP_KIND_RESOURCE_CLAIM_TEMPLATE, p->ns, p->templates[i]);
                int r;
                if (!t.hdr)
                        msg = dp_asprintf("ResourceClaimTemplate %s/%s not found", p->ns, p->templates[i]);
                else if (!d->claims_dir)
                        msg = dp_asprintf("ResourceClaim %s/%s not found (claims are created from templates only with "
                                          "--claims-dir)",
                                          p->ns, cn);
                else if ((r = create_claim(d, p, i, t.claim_template)) < 0) {
                        msg = dp_asprintf("cannot create ResourceClaim %s/%s: %s", p->ns, cn, strerror(-r));
                        *ret_backoff = true;
                } else
                        msg = dp_asprintf("ResourceClaim %s/%s is not allocated", p->ns, cn);
        } else {
                if (!o.hdr) o = mine;
                if (!o.hdr)
                        msg = dp_asprintf("ResourceClaim %s/%s not found", p->ns, cn);
                else if (!o.claim->allocation)
                        msg = dp_asprintf("ResourceClaim %s/%s is not allocated", p->ns, cn);
                else if (!o.claim->meta.uid || !*o.claim->meta.uid)
                        msg = dp_asprintf("ResourceClaim %s/%s has no metadata.uid", p->ns, cn);
                else {
                        if (!p->claim_uids[i] || !streq(p->claim_uids[i], o.claim->meta.uid)) {
                                char *u = strdup(o.claim->meta.uid);
                                if (!u) return -ENOMEM;
                                free(p->claim_uids[i]);
                                p->claim_uids[i] = u;
                        }
                        *ret_claim = o.claim;
                        *ret_why = NULL;
                        return 0;
                }
        }
        if (!msg) return -ENOMEM;
        *ret_why = msg;
        return 0;
}

/* Resolve every claim of the pod (all are looked at, so all of a pod's
 * template claims are created in one pass). 1 all resolved (claims[]
 * filled), 0 the pod waits (*ret_why: the first reason), -ENOMEM. */
static int pod_resolve_claims(dp_node_dra *d, pod_ent *p, const dp_object_list *l, const dp_object_list *g,
                              const dp_resource_claim **claims, char **ret_why, bool *ret_backoff) {
        _cleanup_free_ char *why = NULL;
        bool why_backoff = false;
        for (size_t i = 0; i < p->n_claims; i++) {
                char *msg = NULL;
                bool backoff = false;
                claims[i] = NULL;
                int r = pod_resolve_one(d, p, i, l, g, &claims[i], &msg, &backoff);
                if (r < 0) return r;
                if (msg && !why) {
                        why = msg;
                        why_backoff = backoff;
                } else
                        free(msg);
        }
        if (!why) return 1;
        *ret_why = TAKE_PTR(why);
        *ret_backoff = why_backoff;
        return 0;
}

/* The pod uses exactly these claims now: it leaves the state entries of
 * claims it no longer names (a claim replaced under the same name). */
static bool pod_untrack_others(dp_node_dra *d, const pod_ent *p) {
        bool changed = false;
        for (size_t i = 0; i < d->st->n_claims; i++) {
                claim_ent *c = &d->st->claims[i];
                bool mine = false;
                for (size_t k = 0; k < p->n_claims && !mine; k++)
                        mine = p->claim_uids[k] && streq(p->claim_uids[k], c->uid);
                if (!mine && dp_node_dra_claim_remove_pod(c, p->uid)) changed = true;
        }
        return changed;
}

/* Prepare the pod's claims of one driver that are not prepared yet. They
 * are recorded as "preparing" for the pod and the state saved before the
 * call (a node killed while the driver prepares still knows the claims), and
 * saved again with the answer. 0, or a negative errno with *msg (NULL only
 * for -ENOMEM) and *backoff. */
static int pod_prepare_driver(dp_node_dra *d, pod_ent *p, const char *drv, const dp_resource_claim *const *claims,
                              size_t n, char **msg, bool *backoff) {
        const dp_resource_claim *batch[MAX_CLAIMS_PER_POD + 1];
        size_t nb = 0;
        bool changed = false;
        int r = 0;
        *backoff = true;
        for (size_t j = 0; j < n && r >= 0; j++) {
                bool uses = false;
                for (size_t m = 0; m < claims[j]->allocation->n_results && !uses; m++)
                        uses = streq(claims[j]->allocation->results[m].driver, drv);
                if (!uses) continue;
                claim_ent *ce = dra_claim_find(d, claims[j]->meta.uid, drv);
                if (!(ce && ce->phase == DP_NODE_DRA_PREPARED) && !dra_plugin_for(d, drv) &&
                    !dp_dra_skip_node_operation(claims[j]->allocation, drv, DP_DRA_NODE_PREPARE)) {
                        /* nothing is recorded for a driver that is not there */
                        *msg = dp_asprintf("DRA driver %s is not registered", drv);
                        *backoff = false; /* the registration brings it back */
                        if (changed) (void)dra_state_save(d);
                        return -ENOENT;
                }
                if ((r = claim_track(d, claims[j], drv, p, &ce)) < 0) break;
                changed |= r > 0;
                if (ce->phase == DP_NODE_DRA_PREPARED) continue;
                if (dp_dra_skip_node_operation(claims[j]->allocation, drv, DP_DRA_NODE_PREPARE)) {
                        ce->phase = DP_NODE_DRA_PREPARED;
                        ce->skipped = true;
                        ce->skip_unprepare = dp_dra_skip_node_operation(claims[j]->allocation, drv,
                                                                        DP_DRA_NODE_UNPREPARE);
                        changed = true;
                        log_info("ResourceClaim %s/%s: %s skips NodePrepareResources", ce->ns, ce->name, drv);
                        continue;
                }
                batch[nb++] = claims[j];
        }
        if (r < 0) {
                *msg = r == -ENOMEM ? NULL
                       : r == -E2BIG
                               ? dp_asprintf("more than %d ResourceClaims in the node's DRA state, or %d pods for one",
                                             DP_NODE_DRA_STATE_MAX_CLAIMS, DP_NODE_DRA_STATE_MAX_PODS)
                               : dp_asprintf("the claim or the pod has a name the node's DRA state cannot hold");
                return r;
        }
        const char *v1 = nb && d->v1_unrecorded ? d->v1_unrecorded(d->userdata) : NULL;
        if (v1) {
                /* Fail closed: the driver reads V1's holds from the device
                 * manager's checkpoint, which does not say them now. */
                if (changed) (void)dra_state_save(d);
                *msg = dp_asprintf("V1's holds are not on disk for the driver to see (%s): no claim is prepared "
                                   "until they are",
                                   v1);
                return -EAGAIN;
        }
        if (nb && (changed || d->state_dirty) && (r = dra_state_save(d)) < 0) {
                /* Never prepare what the node could not record: it could not
                 * unprepare it after a crash. */
                *msg = dp_asprintf("cannot record the claims in the node's DRA state: %s",
                                   d->state_error ? d->state_error : strerror(-r));
                return r;
        }
        if (!nb) {
                if (changed) (void)dra_state_save(d);
                return 0;
        }
        for (size_t j = 0; j < nb; j++)
                if ((r = write_claim_file(d, batch[j])) < 0) {
                        *msg = dp_asprintf("cannot write ResourceClaim %s to the claims directory: %s",
                                           batch[j]->meta.name, strerror(-r));
                        return r;
                }
        r = prepare_driver(d, drv, batch, nb, msg);
        if (r == -ENOENT) *backoff = false; /* the registration brings it back */
        if (r < 0 && !*msg && r != -ENOMEM) *msg = dp_asprintf("NodePrepareResources: %s", strerror(-r));
        if (DP_TEST_HOOKS && r >= 0 && d->crash_after_prepare) {
                log_warning("DP_NODE_DRA_CRASH=after-prepare: killed before the state write");
                raise(SIGKILL);
        }
        /* Claims the driver prepared are saved as prepared; on failure they
         * stay "preparing" for the pod and are unprepared once it is gone. */
        (void)dra_state_save(d);
        return r;
}

/* Resolve, record, prepare. The pod is Prepared when every claim of every
 * driver is. 0 (prepared, or waiting with its message) or -ENOMEM (the
 * rescan is tried again). */
static int pod_try(dp_node_dra *d, pod_ent *p, const dp_object_list *l, const dp_object_list *g) {
        if (p->n_claims > MAX_CLAIMS_PER_POD) {
                char *m = dp_asprintf("more than %d resource claims", MAX_CLAIMS_PER_POD);
                if (!m) return -ENOMEM;
                pod_wait(d, p, m, false);
                return 0;
        }
        const dp_resource_claim *claims[MAX_CLAIMS_PER_POD + 1];
        char *why = NULL;
        bool backoff = false;
        int r = pod_resolve_claims(d, p, l, g, claims, &why, &backoff);
        if (r < 0) return r;
        if (r == 0) {
                pod_wait(d, p, why, backoff);
                return 0;
        }
        if (pod_untrack_others(d, p)) (void)dra_state_save(d);
        /* Drivers in first-appearance order; one call per driver. */
        for (size_t i = 0; i < p->n_claims; i++) {
                const dp_allocation_result *a = claims[i]->allocation;
                for (size_t k = 0; k < a->n_results; k++) {
                        const char *drv = a->results[k].driver;
                        bool first = true;
                        for (size_t j = 0; j < i && first; j++)
                                for (size_t m = 0; m < claims[j]->allocation->n_results && first; m++)
                                        first = !streq(claims[j]->allocation->results[m].driver, drv);
                        for (size_t m = 0; m < k && first; m++)
                                first = !streq(a->results[m].driver, drv);
                        if (!first) continue;
                        char *msg = NULL;
                        r = pod_prepare_driver(d, p, drv, claims + i, p->n_claims - i, &msg, &backoff);
                        if (r < 0) {
                                if (!msg) return -ENOMEM;
                                pod_wait(d, p, msg, backoff);
                                return 0;
                        }
                }
        }
        p->prepared = true;
        p->attempts = 0;
        free(p->message);
        p->message = NULL;
        log_info("pod %s/%s: %zu claim(s) prepared", p->ns, p->name, p->n_claims);
        return 0;
}

/* Does a pod of the node still need the claim? A pod that resolved it, a pod
 * the state recorded for it, or — while a pod's claim is not resolved — a
 * pod naming a claim of that namespace and name: when unsure, the claim
 * stays prepared. */
static bool claim_used(const dp_node_dra *d, const claim_ent *c) {
        for (size_t i = 0; i < d->n_pods; i++) {
                const pod_ent *p = &d->pods[i];
                if (dp_node_dra_claim_has_pod(c, p->uid)) return true;
                for (size_t k = 0; k < p->n_claims; k++) {
                        if (p->claim_uids[k] && streq(p->claim_uids[k], c->uid)) return true;
                        if (!p->claim_uids[k] && streq(p->ns, c->ns) && streq(p->claim_names[k], c->name)) return true;
                }
        }
        return false;
}

/* The pods the state records for claim c, from index *i on (for loops). */
pod_ent *dra_pods_using(dp_node_dra *d, const claim_ent *c, size_t *i) {
        for (; *i < d->n_pods; (*i)++)
                if (dp_node_dra_claim_has_pod(c, d->pods[*i].uid)) return &d->pods[*i];
        return NULL;
}

static bool claim_due(const dp_node_dra *d, const claim_ent *c, uint64_t now) {
        return !claim_used(d, c) && (!c->next_try || c->next_try <= now);
}

static void claim_remove(dp_node_dra *d, claim_ent *x) {
        remove_claim_file(d, x);
        dp_node_dra_state_remove(d->st, x);
}

/* One NodeUnprepareResources call for the due claims of one driver. */
static void unprepare_driver(dp_node_dra *d, const char *drv, uint64_t now) {
        const plugin_ent *p = dra_plugin_for(d, drv);
        if (!p) return; /* waits for its driver to come back */
        const claim_ent *batch[64];
        size_t nb = 0;
        for (size_t k = 0; k < d->st->n_claims && nb < ELEMENTSOF(batch); k++)
                if (streq(d->st->claims[k].driver, drv) && claim_due(d, &d->st->claims[k], now)) batch[nb++] = &d->st->claims[k];
        if (!nb) return;
        _cleanup_grpc_reply_ dp_grpc_reply rep = DP_GRPC_REPLY_INIT;
        dp_error e = DP_ERROR_INIT;
        int r = call_driver(d, p, "NodeUnprepareResources", NULL, batch, nb,
                            &k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__descriptor, &rep,
                            &e);
        const pb_unprep_resp *resp = r >= 0 ? (const pb_unprep_resp *)rep.msg : NULL;
        char *gone[64];
        size_t ng = 0;
        for (size_t k = 0; k < nb; k++) {
                claim_ent *bc = (claim_ent *)batch[k];
                const char *cerr = NULL;
                bool answered = false;
                for (size_t m = 0; resp && m < resp->n_claims; m++)
                        if (streq(resp->claims[m]->key, bc->uid)) {
                                answered = true;
                                if (resp->claims[m]->value && resp->claims[m]->value->error &&
                                    *resp->claims[m]->value->error)
                                        cerr = resp->claims[m]->value->error;
                        }
                if (resp && answered && !cerr) {
                        gone[ng++] = bc->uid;
                        continue;
                }
                free(bc->error);
                bc->error = strdup(!resp ? dp_error_msg(&e) : cerr ? cerr : "NodeUnprepareResources skipped the claim");
                bc->attempts++;
                bc->next_try = now + dra_backoff_usec(d, bc->attempts);
                log_warning("NodeUnprepareResources %s/%s (%s): %s; retrying", bc->ns, bc->name, bc->uid,
                            bc->error ? bc->error : "");
        }
        /* Entries move as others are removed: look each up again. */
        char *uids[64];
        for (size_t g = 0; g < ng; g++)
                uids[g] = strdup(gone[g]);
        bool removed = false;
        for (size_t g = 0; g < ng; g++) {
                claim_ent *x = uids[g] ? dra_claim_find(d, uids[g], drv) : NULL;
                if (x) {
                        log_info("unprepared ResourceClaim %s/%s (%s) through %s", x->ns, x->name, x->uid, drv);
                        claim_remove(d, x);
                        removed = true;
                }
                free(uids[g]);
        }
        /* Confirmed: the entries leave the state (a crash before this save
         * only repeats an unprepare the driver answers as done). */
        if (removed) (void)dra_state_save(d);
}

/* Unprepare what no pod uses, batched per driver. */
static void unprepare_unused(dp_node_dra *d) {
        uint64_t now = dp_loop_now();
        bool removed = false;
        for (size_t i = 0; i < d->st->n_claims;) {
                claim_ent *c = &d->st->claims[i];
                if (claim_due(d, c, now) && (c->skipped || c->skip_unprepare)) {
                        claim_remove(d, c);
                        removed = true;
                } else
                        i++;
        }
        if (removed) (void)dra_state_save(d);
        char **drivers = calloc(d->st->n_claims + 1, sizeof *drivers);
        size_t nd = 0;
        if (!drivers) return;
        for (size_t i = 0; i < d->st->n_claims; i++) {
                bool seen = false;
                for (size_t k = 0; k < nd && !seen; k++)
                        seen = streq(drivers[k], d->st->claims[i].driver);
                if (!seen && claim_due(d, &d->st->claims[i], now) && !(drivers[nd] = strdup(d->st->claims[i].driver))) break;
                if (!seen && drivers[nd]) nd++;
        }
        for (size_t k = 0; k < nd; k++)
                unprepare_driver(d, drivers[k], now);
        dp_strv_free_n(drivers, nd);
}

static int cmp_strp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int load_manifests(const dp_node_dra *d, dp_object_list *l) {
        if (!d->manifests_dir) return 0;
        _cleanup_(closedir_safep) DIR *dir = opendir(d->manifests_dir);
        if (!dir) return -errno;
        char **names = NULL;
        size_t n = 0;
        struct dirent *de;
        while ((de = readdir(dir))) {
                size_t len = strlen(de->d_name);
                if (de->d_name[0] == '.') continue;
                if (!((len > 5 && streq(de->d_name + len - 5, ".yaml")) ||
                      (len > 4 && streq(de->d_name + len - 4, ".yml")) ||
                      (len > 5 && streq(de->d_name + len - 5, ".json"))))
                        continue;
                char **v = realloc(names, (n + 1) * sizeof *v);
                if (!v || !(v[n] = dp_asprintf("%s/%s", d->manifests_dir, de->d_name))) {
                        /* a manifest left out would make its pods look gone */
                        dp_strv_free_n(v ? v : names, n);
                        return -ENOMEM;
                }
                names = v;
                n++;
        }
        if (n) qsort(names, n, sizeof *names, cmp_strp);
        int r = 0;
        for (size_t i = 0; i < n && r >= 0; i++) {
                dp_error e = DP_ERROR_INIT;
                int rr = dp_model_load_file(names[i], l, &e);
                if (rr == -ENOMEM)
                        r = rr;
                else if (rr < 0)
                        log_debug("DRA manager skips %s: %s", names[i], dp_error_msg(&e));
        }
        dp_strv_free_n(names, n);
        return r;
}

static bool pod_known(const dp_node_dra *d, const char *uid) {
        for (size_t i = 0; i < d->n_pods; i++)
                if (streq(d->pods[i].uid, uid)) return true;
        return false;
}

/* Pods that are gone — also those that went while the node was down — leave
 * every state entry; an entry without pods is then unprepared. */
static void state_forget_gone_pods(dp_node_dra *d) {
        bool changed = false;
        for (size_t i = 0; i < d->st->n_claims; i++) {
                claim_ent *c = &d->st->claims[i];
                for (size_t k = 0; k < c->n_pods;) {
                        if (pod_known(d, c->pods[k].uid)) {
                                k++;
                                continue;
                        }
                        log_info("ResourceClaim %s/%s (%s): pod %s/%s is gone", c->ns, c->name, c->uid, c->pods[k].ns,
                                 c->pods[k].name);
                        _cleanup_free_ char *uid = strdup(c->pods[k].uid);
                        if (!uid) return;
                        dp_node_dra_claim_remove_pod(c, uid);
                        changed = true;
                }
        }
        if (changed) (void)dra_state_save(d);
}

static void rescan_once(dp_node_dra *d) {
        _cleanup_(dp_object_list_freep) dp_object_list *l = dp_object_list_new();
        _cleanup_(dp_object_list_freep) dp_object_list *g = dp_object_list_new();
        uint64_t now = dp_loop_now();
        /* Out of memory (or an unreadable manifest directory) before every
         * manifest and claim is read: change nothing (a pod not read would
         * look gone, and its claims would be unprepared) and try again. */
        d->rescan_retry = 0;
        if (!l || !g || load_manifests(d, l) < 0 || load_claims_dir(d, g) < 0) {
                log_info("DRA manager: cannot read every pod (out of memory or the manifest directory); trying again");
                d->rescan_retry = now + dra_backoff_usec(d, 1);
                return;
        }
        for (size_t i = 0; i < d->n_pods; i++)
                d->pods[i].seen = false;
        for (size_t i = 0; i < l->n; i++) {
                if (l->items[i].hdr->kind != DP_KIND_POD) continue;
                const dp_pod *pod = l->items[i].pod;
                if ((!pod->n_resource_claims && !pod->extended_resource_claim_name) || !pod->meta.name) continue;
                pod_ent *p = pod_get(d, pod, l);
                if (!p) { /* out of memory: the pods not looked at yet must not look gone */
                        d->rescan_retry = now + dra_backoff_usec(d, 1);
                        return;
                }
                p->seen = true;
        }
        for (size_t i = 0; i < d->n_pods; i++) {
                pod_ent *p = &d->pods[i];
                if (!p->seen || p->prepared || (p->next_try && p->next_try > now)) continue;
                if (pod_try(d, p, l, g) < 0) { /* out of memory: this pod and the rest next time */
                        d->rescan_retry = now + dra_backoff_usec(d, 1);
                        break;
                }
        }
        for (size_t i = 0; i < d->n_pods;) {
                if (d->pods[i].seen) {
                        i++;
                        continue;
                }
                log_info("pod %s/%s is gone", d->pods[i].ns, d->pods[i].name);
                delete_pod_claims(d, &d->pods[i], g);
                pod_clear(&d->pods[i]);
                d->pods[i] = d->pods[--d->n_pods];
        }
        state_forget_gone_pods(d);
        unprepare_unused(d);
}

void dra_arm_timer(dp_node_dra *d) {
        uint64_t t = d->rescan_retry;
        for (size_t i = 0; i < d->n_pods; i++)
                if (!d->pods[i].prepared && d->pods[i].next_try && (!t || d->pods[i].next_try < t))
                        t = d->pods[i].next_try;
        for (size_t i = 0; i < d->st->n_claims; i++)
                if (d->st->claims[i].next_try && (!t || d->st->claims[i].next_try < t)) t = d->st->claims[i].next_try;
        for (size_t i = 0; i < d->n_plugins; i++) {
                if (d->plugins[i].next_try && (!t || d->plugins[i].next_try < t)) t = d->plugins[i].next_try;
                const health_watch *w = d->plugins[i].hw;
                if (w && w->next_try && (!t || w->next_try < t)) t = w->next_try;
                uint64_t lt = d->plugins[i].list_next_try;
                if (d->plugins[i].list_pending && lt && (!t || lt < t)) t = lt;
        }
        /* A failed state save is tried again. */
        if (d->state_dirty) {
                uint64_t st = dp_loop_now() + dra_backoff_usec(d, 1);
                if (!t || st < t) t = st;
        }
        dp_loop_source_set_time(d->timer, t);
}

void dp_node_dra_rescan(dp_node_dra *d) {
        if (!d) return;
        if (d->busy) { /* a synchronous call is running the loop */
                d->again = true;
                return;
        }
        d->busy = true;
        do {
                d->again = false;
                rescan_once(d);
        } while (d->again);
        d->busy = false;
        if (d->rewalk) {
                dra_registry_rewalk(d);
                dp_node_dra_rescan(d); /* a driver may have come or gone meanwhile */
                return;
        }
        dra_arm_timer(d);
        dra_notify_changed(d);
}

static int on_timer(dp_loop_source *s, uint64_t now, void *ud) {
        dp_node_dra *d = ud;
        for (size_t i = 0; i < d->n_plugins; i++) {
                if (d->plugins[i].next_try && d->plugins[i].next_try <= now && !d->rewalk)
                        dra_plugin_attempt(d, &d->plugins[i]);
                health_watch *w = d->plugins[i].hw;
                if (w && w->next_try && w->next_try <= now) dra_health_open(w);
                plugin_ent *p = &d->plugins[i];
                if (p->ok && p->list_pending && p->list_next_try && p->list_next_try <= now && !d->rewalk)
                        dra_plugin_list(d, p);
        }
        if (d->state_dirty) (void)dra_state_save(d);
        dra_registry_rewalk(d);
        dp_node_dra_rescan(d);
        return 0;
}

/* ---- status ---------------------------------------------------------------------------------- */

int dp_node_dra_cdi_env_doc(const dp_doc_node *root, const char *id, dp_doc_set *s, dp_doc_node *env) {
        const char *eq = id ? strchr(id, '=') : NULL;
        if (!eq || !root || !env || env->type != DP_DOC_MAP) return 0;
        const dp_doc_node *k = dp_doc_get(root, "kind");
        if (!k || k->type != DP_DOC_SCALAR || k->len != (size_t)(eq - id) || strncmp(k->str, id, k->len) != 0) return 0;
        const dp_doc_node *devs = dp_doc_get(root, "devices");
        int found = 0;
        for (size_t i = 0; devs && devs->type == DP_DOC_SEQ && i < devs->n; i++) {
                const dp_doc_node *nm = dp_doc_get(devs->items[i], "name");
                if (!nm || nm->type != DP_DOC_SCALAR || !streq(nm->str, eq + 1)) continue;
                found = 1;
                const dp_doc_node *lists[2] = {dp_doc_get(dp_doc_get(root, "containerEdits"), "env"),
                                               dp_doc_get(dp_doc_get(devs->items[i], "containerEdits"), "env")};
                for (size_t li = 0; li < 2; li++)
                        for (size_t m = 0; lists[li] && lists[li]->type == DP_DOC_SEQ && m < lists[li]->n; m++) {
                                const dp_doc_node *v = lists[li]->items[m];
                                if (v->type != DP_DOC_SCALAR) continue;
                                const char *veq = strchr(v->str, '=');
                                if (!veq || veq == v->str) continue; /* CDI: "=" required, not first */
                                _cleanup_free_ char *key = strndup(v->str, (size_t)(veq - v->str));
                                dp_doc_node *nv = dp_doc_new_str(s, veq + 1);
                                if (!key || !nv) return -ENOMEM;
                                bool replaced = false; /* later wins, as the runtime applies edits in order */
                                for (size_t q = 0; q < env->n; q++)
                                        if (streq(env->pairs[q].key, key)) {
                                                env->pairs[q].value = nv;
                                                replaced = true;
                                        }
                                if (!replaced && dp_doc_map_add(s, env, key, nv) < 0) return -ENOMEM;
                        }
        }
        return found;
}

/* The env of CDI device `id` ("vendor/class=name") from the spec files of
 * the CDI directory (*.json, *.yaml; a file that does not parse is skipped,
 * as the runtime skips it). */
static int cdi_env(const dp_node_dra *d, const char *id, dp_doc_set *s, dp_doc_node *env) {
        _cleanup_(closedir_safep) DIR *dir = opendir(d->cdi_dir);
        if (!dir) return 0;
        struct dirent *de;
        while ((de = readdir(dir))) {
                size_t len = strlen(de->d_name);
                if (de->d_name[0] == '.' || !((len > 5 && streq(de->d_name + len - 5, ".json")) ||
                                              (len > 5 && streq(de->d_name + len - 5, ".yaml"))))
                        continue;
                _cleanup_free_ char *path = dp_asprintf("%s/%s", d->cdi_dir, de->d_name);
                _cleanup_(dp_doc_set_freep) dp_doc_set *f = dp_doc_set_new();
                if (!path || !f) return -ENOMEM;
                if (dp_doc_parse_file(f, path, NULL) < 0) continue;
                for (size_t i = 0; i < dp_doc_count(f); i++)
                        if (dp_node_dra_cdi_env_doc(dp_doc_root(f, i), id, s, env) < 0) return -ENOMEM;
        }
        return 0;
}

/* A status string: "" where there is none (the key is always there). */
static void put_str(dp_doc_builder *b, dp_doc_node *m, const char *k, const char *v) {
        dp_doc_b_put_str(b, m, k, v ? v : "");
}

static const char *health_name(int h) {
        return h == V1ALPHA1__HEALTH_STATUS__HEALTHY     ? "Healthy"
               : h == V1ALPHA1__HEALTH_STATUS__UNHEALTHY ? "Unhealthy"
                                                         : "Unknown";
}

/* The container's view of a device's health, as the kubelet puts it into
 * containerStatuses[].allocatedResourcesStatus (ResourceHealthStatus):
 * {name: "claim:<claim>/<request>", resourceID: "<driver>/<pool>/<device>",
 * health}. Only for drivers whose health stream the node watches. */
static void status_device_health(const dp_node_dra *d, const claim_ent *c, const prep_dev *pd, dp_doc_builder *b,
                                 dp_doc_node *ars) {
        const plugin_ent *pl = dra_plugin_for(d, c->driver);
        const health_watch *w = pl ? pl->hw : NULL;
        if (!w) return;
        const char *health = "Unknown";
        for (size_t i = 0; i < w->n_devs; i++)
                if (streq(w->devs[i].device, pd->device) && streq(w->devs[i].pool, pd->pool))
                        health = health_name(w->devs[i].health);
        _cleanup_free_ char *name = dp_asprintf("claim:%s/%s", c->name, pd->n_requests ? pd->requests[0] : "");
        _cleanup_free_ char *rid = dp_asprintf("%s/%s/%s", c->driver, pd->pool, pd->device);
        if (!name || !rid) b->r = -ENOMEM;
        dp_doc_node *m = dp_doc_b_map(b);
        put_str(b, m, "name", name);
        put_str(b, m, "resourceID", rid);
        put_str(b, m, "health", health);
        dp_doc_b_push(b, ars, m);
}

/* Does the device pd serve the container's claim reference ref (its
 * request, or a subrequest of it; no request: every device)? */
static bool device_serves(const prep_dev *pd, const char *request) {
        if (!request || !pd->n_requests) return true;
        size_t rl = strlen(request);
        for (size_t t = 0; t < pd->n_requests; t++)
                if (streq(pd->requests[t], request) ||
                    (strncmp(pd->requests[t], request, rl) == 0 && pd->requests[t][rl] == '/'))
                        return true;
        return false;
}

/* One container of a prepared pod: its CDI devices, the environment they
 * give it and their health. */
static dp_doc_node *status_container(dp_node_dra *d, const pod_ent *p, const ctr_ent *ce, dp_doc_builder *b) {
        dp_doc_node *cm = dp_doc_b_map(b), *ids = dp_doc_b_seq(b), *env = dp_doc_b_map(b), *ars = dp_doc_b_seq(b);
        for (size_t k = 0; b->r >= 0 && k < ce->n_claims; k++) {
                const char *uid = NULL;
                for (size_t j = 0; j < p->n_claims; j++)
                        if (streq(p->pod_claims[j], ce->claims[k].pod_claim)) uid = p->claim_uids[j];
                for (size_t j = 0; uid && j < d->st->n_claims; j++) {
                        const claim_ent *c = &d->st->claims[j];
                        if (!streq(c->uid, uid)) continue;
                        for (size_t q = 0; q < c->n_devs; q++) {
                                const prep_dev *pd = &c->devs[q];
                                if (!device_serves(pd, ce->claims[k].request)) continue;
                                for (size_t t = 0; t < pd->n_cdi; t++) {
                                        dp_doc_b_push(b, ids, dp_doc_b_str(b, pd->cdi[t]));
                                        if (b->r >= 0 && cdi_env(d, pd->cdi[t], b->set, env) < 0) b->r = -ENOMEM;
                                }
                                status_device_health(d, c, pd, b, ars);
                        }
                }
        }
        put_str(b, cm, "name", ce->name);
        dp_doc_b_put(b, cm, "cdiDevices", ids);
        dp_doc_b_put(b, cm, "env", env);
        if (ars && ars->n) dp_doc_b_put(b, cm, "allocatedResourcesStatus", ars);
        return cm;
}

static void status_pod(dp_node_dra *d, const pod_ent *p, dp_doc_builder *b, dp_doc_node *seq) {
        dp_doc_node *m = dp_doc_b_map(b);
        put_str(b, m, "namespace", p->ns);
        put_str(b, m, "name", p->name);
        put_str(b, m, "phase", p->prepared ? "Prepared" : "Waiting");
        dp_doc_b_put_uint(b, m, "attempts", p->attempts);
        if (p->message) put_str(b, m, "message", p->message);
        dp_doc_node *cl = dp_doc_b_seq(b), *rcs = dp_doc_b_seq(b);
        for (size_t i = 0; b->r >= 0 && i < p->n_claims; i++) {
                dp_doc_b_push(b, cl, dp_doc_b_str(b, p->claim_names[i]));
                if (streq(p->pod_claims[i], EXTENDED_CLAIM)) {
                        put_str(b, m, "extendedResourceClaim", p->claim_names[i]);
                        continue;
                }
                /* status.resourceClaimStatuses, as the resource-claim controller sets it */
                dp_doc_node *e = dp_doc_b_map(b);
                put_str(b, e, "name", p->pod_claims[i]);
                put_str(b, e, "resourceClaimName", p->claim_names[i]);
                dp_doc_b_push(b, rcs, e);
        }
        dp_doc_b_put(b, m, "claims", cl);
        dp_doc_b_put(b, m, "resourceClaimStatuses", rcs);
        dp_doc_node *cs = dp_doc_b_seq(b);
        for (size_t i = 0; b->r >= 0 && p->prepared && i < p->n_ctrs; i++)
                dp_doc_b_push(b, cs, status_container(d, p, &p->ctrs[i], b));
        dp_doc_b_put(b, m, "containers", cs);
        dp_doc_b_push(b, seq, m);
}

/* draState: where the node's DRA state came from at start, whether it is
 * being rebuilt, a failed save, and the drivers whose holdings are unknown. */
static void status_state(const dp_node_dra *d, dp_doc_builder *b, dp_doc_node *root) {
        dp_doc_node *m = dp_doc_b_map(b), *unk = dp_doc_b_seq(b);
        put_str(b, m, "origin", d->state_origin);
        dp_doc_b_put_bool(b, m, "rebuild", d->st->rebuild);
        if (d->state_error) put_str(b, m, "error", d->state_error);
        for (size_t i = 0; b->r >= 0 && i < d->st->n_unknown; i++) {
                dp_doc_node *x = dp_doc_b_map(b);
                put_str(b, x, "driver", d->st->unknown[i].driver);
                put_str(b, x, "reason", d->st->unknown[i].reason);
                dp_doc_b_push(b, unk, x);
        }
        dp_doc_b_put(b, m, "unknownDrivers", unk);
        dp_doc_b_put(b, root, "draState", m);
}

/* draClaims[]: one prepared (or preparing, or unpreparing) claim. */
static dp_doc_node *status_claim(const dp_node_dra *d, const claim_ent *c, dp_doc_builder *b) {
        dp_doc_node *m = dp_doc_b_map(b), *devs = dp_doc_b_seq(b);
        put_str(b, m, "namespace", c->ns);
        put_str(b, m, "name", c->name);
        put_str(b, m, "uid", c->uid);
        put_str(b, m, "driver", c->driver);
        if (c->skipped) dp_doc_b_put_bool(b, m, "skipped", true);
        if (c->error) put_str(b, m, "unprepareError", c->error);
        /* unpreparing: no pod needs it; it stays here until the driver confirms */
        put_str(b, m, "state",
                !claim_used(d, c)                  ? "unpreparing"
                : c->phase == DP_NODE_DRA_PREPARED ? "prepared"
                                                   : "preparing");
        dp_doc_node *pods_seq = dp_doc_b_seq(b);
        for (size_t k = 0; b->r >= 0 && k < c->n_pods; k++) {
                _cleanup_free_ char *pn = dp_asprintf("%s/%s", c->pods[k].ns, c->pods[k].name);
                dp_doc_b_push(b, pods_seq, pn ? dp_doc_b_str(b, pn) : NULL); /* NULL: out of memory */
        }
        dp_doc_b_put(b, m, "pods", pods_seq);
        for (size_t k = 0; b->r >= 0 && k < c->n_devs; k++) {
                dp_doc_node *dm = dp_doc_b_map(b);
                put_str(b, dm, "pool", c->devs[k].pool);
                put_str(b, dm, "device", c->devs[k].device);
                dp_doc_b_put_strv(b, dm, "cdiDeviceIDs", c->devs[k].cdi, c->devs[k].n_cdi);
                dp_doc_b_push(b, devs, dm);
        }
        dp_doc_b_put(b, m, "devices", devs);
        return m;
}

/* draHealth[]: per driver, what its NodeWatchResources stream said. */
static dp_doc_node *status_health(const health_watch *w, dp_doc_builder *b) {
        dp_doc_node *m = dp_doc_b_map(b), *devs = dp_doc_b_seq(b);
        put_str(b, m, "driver", w->driver);
        put_str(b, m, "state", w->state);
        for (size_t k = 0; b->r >= 0 && k < w->n_devs; k++) {
                const health_dev *h = &w->devs[k];
                dp_doc_node *dm = dp_doc_b_map(b);
                put_str(b, dm, "pool", h->pool);
                put_str(b, dm, "device", h->device);
                put_str(b, dm, "health", health_name(h->health));
                if (*h->message) put_str(b, dm, "message", h->message);
                dp_doc_b_put_int(b, dm, "lastUpdated", h->updated);
                dp_doc_b_push(b, devs, dm);
        }
        dp_doc_b_put(b, m, "devices", devs);
        return m;
}

int dp_node_dra_status(dp_node_dra *d, dp_doc_set *s, dp_doc_node *root) {
        if (!d) return 0;
        dp_doc_builder b = DP_DOC_BUILDER_INIT(s);
        dp_doc_node *pl = dp_doc_b_seq(&b), *pods = dp_doc_b_seq(&b), *cl = dp_doc_b_seq(&b), *hl = dp_doc_b_seq(&b);
        for (size_t i = 0; b.r >= 0 && i < d->n_plugins; i++) {
                const plugin_ent *p = &d->plugins[i];
                dp_doc_node *m = dp_doc_b_map(&b);
                put_str(&b, m, "socket", p->sock);
                put_str(&b, m, "name", p->driver);
                put_str(&b, m, "state", p->ok ? "registered" : "failed");
                if (p->ok) put_str(&b, m, "endpoint", p->endpoint);
                if (p->ok) put_str(&b, m, "version", p->version);
                if (p->error) put_str(&b, m, "error", p->error);
                dp_doc_b_push(&b, pl, m);
                if (p->hw) dp_doc_b_push(&b, hl, status_health(p->hw, &b));
        }
        for (size_t i = 0; b.r >= 0 && i < d->n_pods; i++)
                status_pod(d, &d->pods[i], &b, pods);
        for (size_t i = 0; b.r >= 0 && i < d->st->n_claims; i++)
                dp_doc_b_push(&b, cl, status_claim(d, &d->st->claims[i], &b));
        dp_doc_b_put(&b, root, "draHealth", hl);
        dp_doc_b_put(&b, root, "draPlugins", pl);
        dp_doc_b_put(&b, root, "draPods", pods);
        dp_doc_b_put(&b, root, "draClaims", cl);
        dp_doc_b_put_uint(&b, root, "draPrepareCalls", d->prepare_calls);
        status_state(d, &b, root);
        return b.r;
}

/* ---- life cycle ------------------------------------------------------------------------------ */

/* Read the node's DRA state. Missing or corrupt: an empty table marked
 * "rebuild" (each driver's List fills it); a corrupt file is kept as
 * <file>.corrupt. Unreadable for another reason: the node does not start
 * (it could not tell what is prepared). 0 or a negative errno with err. */
static int state_load(dp_node_dra *d, dp_error *err) {
        if (!d->state_dir) {
                d->st = dp_node_dra_state_new();
                d->state_origin = strdup("not saved (no state directory)");
                return d->st && d->state_origin ? 0 : dp_error_set(err, -ENOMEM, "DRA manager: out of memory");
        }
        _cleanup_free_ char *path = dp_asprintf("%s/%s", d->state_dir, DP_NODE_DRA_STATE_FILE);
        if (!path) return dp_error_set(err, -ENOMEM, "DRA manager: out of memory");
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        dp_error e = DP_ERROR_INIT;
        int r = dp_read_file(path, DP_NODE_DRA_STATE_MAX_INPUT, &buf, &len, &e);
        /* not a regular file (a directory, a symlink to a device, dangling):
         * damage, handled as corrupt content is */
        if ((r == -EISDIR || r == -EINVAL || r == -ELOOP || r == -ENOENT) && node_file_is_odd(path))
                r = dp_error_set(&e, -EBADMSG, "node's DRA state %s is not a regular file", path);
        if (r >= 0) r = dp_node_dra_state_decode(buf, len, path, &d->st, &e);
        if (r == -ENOMEM) return dp_error_set(err, r, "%s", dp_error_msg(&e));
        if (r >= 0) {
                d->state_origin = dp_asprintf("loaded %zu claim(s)%s", d->st->n_claims,
                                              d->st->rebuild ? ", still being rebuilt" : "");
                log_info("node's DRA state %s: %zu claim(s)%s", path, d->st->n_claims,
                         d->st->rebuild ? " (still being rebuilt from the drivers)" : "");
        } else if (r == -ENOENT) {
                d->state_origin = strdup("missing: rebuilt from the drivers' PreparedClaims List");
                log_info("node's DRA state %s is missing: asking every driver what it holds", path);
        } else if (r == -EBADMSG || r == -E2BIG) {
                /* Never trusted, never silently lost: kept aside. */
                _cleanup_free_ char *to = NULL;
                int k = dp_file_set_aside(path, &to);
                if (k < 0)
                        return dp_error_errno(err, k, "%s; cannot keep it aside as %s.corrupt", dp_error_msg(&e), path);
                log_error("%s; kept as %s, asking every driver what it holds", dp_error_msg(&e), to);
                d->state_origin = dp_asprintf("corrupt (kept as %s): %s", to, dp_error_msg(&e));
        } else
                return dp_error_set(err, r, "node's DRA state: %s", dp_error_msg(&e));
        if (r < 0) {
                d->st = dp_node_dra_state_new();
                if (d->st) d->st->rebuild = true;
        }
        if (!d->st || !d->state_origin) return dp_error_set(err, -ENOMEM, "DRA manager: out of memory");
        /* The rebuild mark goes to disk at once; a failed save is tried again
         * (and no claim is prepared while it fails). */
        if (r < 0) (void)dra_state_save(d);
        return 0;
}

int dp_node_dra_new(dp_loop *l, const dp_node_dra_options *o, dp_node_dra **ret, dp_error *err) {
        assert_return(l && o && o->registry_dir && ret, -EINVAL);
        dp_node_dra *d = calloc(1, sizeof *d);
        if (!d) return dp_error_set(err, -ENOMEM, "DRA manager: %s", strerror(ENOMEM));
        d->loop = l;
        d->registry_dir = strdup(o->registry_dir);
        d->manifests_dir = o->manifests_dir ? strdup(o->manifests_dir) : NULL;
        d->claims_dir = o->claims_dir ? strdup(o->claims_dir) : NULL;
        d->cdi_dir = strdup(o->cdi_dir ? o->cdi_dir : "/var/run/cdi");
        d->backoff_initial_ms = o->backoff_initial_ms ? o->backoff_initial_ms : 1000;
        d->backoff_max_ms = o->backoff_max_ms ? o->backoff_max_ms : 10000;
        d->changed = o->changed;
        d->v1_unrecorded = o->v1_unrecorded;
        d->userdata = o->userdata;
        d->state_dir = o->state_dir ? strdup(o->state_dir) : NULL;
        /* Test hook (tests/tools/test-v2-node-restart.sh; test builds only,
         * base/test-hooks.h): die between a driver's prepare and the state
         * write that records it. */
        d->crash_after_prepare = streq_ptr(dp_test_hook("DP_NODE_DRA_CRASH"), "after-prepare");
        int r = 0;
        if (!d->registry_dir || !d->cdi_dir || (o->manifests_dir && !d->manifests_dir) ||
            (o->claims_dir && !d->claims_dir) || (o->state_dir && !d->state_dir))
                r = dp_error_set(err, -ENOMEM, "DRA manager: %s", strerror(ENOMEM));
        if (r >= 0) r = state_load(d, err);
        if (r >= 0 && mkdir(d->registry_dir, 0750) < 0 && errno != EEXIST)
                r = dp_error_errno(err, -errno, "create %s", d->registry_dir);
        if (r >= 0 && (r = dp_loop_add_timer(l, 0, on_timer, d, &d->timer)) < 0) dp_error_errno(err, r, "timer");
        if (r >= 0 && (r = dp_loop_add_inotify(l, d->registry_dir, IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM,
                                               dra_on_registry_event, d, &d->reg_watch)) < 0)
                dp_error_errno(err, r, "watch %s", d->registry_dir);
        if (r < 0) {
                dp_node_dra_free(d);
                return r;
        }
        /* Sockets already there (the kubelet walks the directory at start). */
        _cleanup_(closedir_safep) DIR *dir = opendir(d->registry_dir);
        struct dirent *de;
        while (dir && (de = readdir(dir)))
                dra_socket_added(d, de->d_name);
        *ret = d;
        return 0;
}

dp_node_dra *dp_node_dra_free(dp_node_dra *d) {
        if (!d) return NULL;
        dp_loop_source_free(d->reg_watch);
        dp_loop_source_free(d->timer);
        for (size_t i = 0; i < d->n_plugins; i++)
                dra_plugin_clear(&d->plugins[i]);
        free(d->plugins);
        dp_node_dra_state_free(d->st);
        dp_free_many(d->state_dir, d->state_origin, d->state_error);
        for (size_t i = 0; i < d->n_pods; i++)
                pod_clear(&d->pods[i]);
        dp_free_many(d->pods, d->registry_dir, d->manifests_dir, d->claims_dir, d->cdi_dir);
        free(d);
        return NULL;
}

uint64_t dp_node_dra_prepare_calls(const dp_node_dra *d) { return d ? d->prepare_calls : 0; }

bool dp_node_dra_pod_ready(const dp_node_dra *d, const char *ns, const char *name, const char **why) {
        *why = "the pod has resource claims and the node has no DRA manager (--registry-dir)";
        if (!d) return false;
        for (size_t i = 0; i < d->n_pods; i++) {
                const pod_ent *p = &d->pods[i];
                if (!streq(p->ns, ns) || !streq(p->name, name)) continue;
                if (p->prepared) return true;
                *why = p->message ? p->message : "claims not prepared yet";
                return false;
        }
        *why = "claims not prepared yet";
        return false;
}

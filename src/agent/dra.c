/* SPDX-License-Identifier: Apache-2.0
 * The agent's DRA driver: kubelet plugin service (v1, v1beta1), health
 * stream, plugin-watcher registration, ResourceSlices to a directory, and
 * prepare/unprepare through src/dra (see dra-internal.h). Model side: this
 * file must not include devices/device.h. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>

#include "agent/dirlock.h"
#include "agent/dra-internal.h"
#include "agent/dra-list.h"
#include "agent/metrics.h"
#include "base/fileio.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "dra/cdi.h"
#include "dra/driver.h"
#include "dra/recover.h"
#include "dra/slices.h"
#include "grpc/grpc.h"
#include "kube/offload.h"
#include "model/model.h"
#include "proto/proto.h"

/* v1 and v1beta1 are the same messages on the wire except v1's share_id
 * (field 5, wire-protocols.md 3.2), so both paths decode and encode with
 * the v1 types and the v1beta1 replies leave share_id unset. */
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim pb_claim;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Device pb_device;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest pb_prep_req;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse pb_prep_resp;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse__ClaimsEntry pb_prep_entry;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourceResponse pb_prep_one;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesRequest pb_unprep_req;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse pb_unprep_resp;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse__ClaimsEntry pb_unprep_entry;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourceResponse pb_unprep_one;

#define DRA_V1_PREFIX "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/"
#define DRA_V1BETA1_PREFIX "/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/"
#define CLAIM_FILE_MAX (4u << 20)

/* The durable files the driver writes outside a kubelet call, whose
 * failures only the log and the metrics can tell. */
typedef enum dra_file { DRA_FILE_SLICES, DRA_FILE_CHECKPOINT, DRA_FILE_CDI, DRA_FILE_MAX } dra_file;

typedef struct dra_file_state {
        bool failing;
        uint64_t failures; /* failed writes so far */
        char *why;         /* the last failure while failing */
} dra_file_state;

struct agent_dra {
        dp_loop *loop;
        char *node_name;
        char *driver;
        char *registry_dir, *reg_sock_name, *reg_sock_path;
        char *state_dir, *dra_sock_path; /* <plugins-dir>/<driver> */
        char *cdi_dir, *slices_dir, *claims_dir;
        dp_ledger *ledger; /* borrowed */
        dp_dra_inventory *inv;
        dp_dra_publisher *pub;
        dp_dra_checkpoint *ckpt;
        dp_grpc_server *srv, *reg_srv;
        dp_loop_source *reg_watch, *state_watch;
        dp_grpc_streams streams; /* open NodeWatchResources */
        uint64_t registrations;
        dp_dra_taint_rule *rules; /* fault_class strings owned here */
        size_t n_rules;
        dp_dra_taint_effect default_effect;
        dp_kube_client *kube;         /* borrowed; NULL: no API */
        dp_kube_slices *kslices;      /* with kube */
        dp_kube_offload *offload;     /* decodes long claims (started with the first) */
        uint64_t decode_seq;          /* the last offload job's tag */
        agent_metrics *metrics;       /* borrowed; may be NULL */
        struct pending_prep *pending; /* NodePrepareResources waiting for the API */
        void (*holds_changed)(void *userdata);
        void *userdata;
        char **unknown; /* claim uids whose devices are unknown (recover.h) */
        char **unknown_why;
        size_t n_unknown;
        int lock; /* agent_dir_lock on state_dir (the driver directory); -1 before */
        /* The periodic check (check_usec): writes that failed are retried
         * and the CDI specs compared with the checkpoint. */
        dp_loop_source *check;
        uint64_t check_usec;
        bool slices_pending; /* the slices file is behind the publisher */
        bool ckpt_pending;   /* the checkpoint on disk is behind d->ckpt */
        dra_file_state files[DRA_FILE_MAX];
        uint64_t cdi_rewritten; /* specs written again from the checkpoint */
        size_t cdi_no_copy;     /* entries of an older checkpoint without the spec's bytes (logged when it changes) */
};

static const char *const dra_file_names[DRA_FILE_MAX] = {"slices", "checkpoint", "cdi"};

/* One durable file's write failed (r < 0, why) or succeeded: said once per
 * change in the log, and kept for the metrics. */
static void file_result(agent_dra *d, dra_file f, int r, const char *why) {
        dra_file_state *st = &d->files[f];
        if (r >= 0) {
                if (st->failing)
                        log_info("%s written again: the earlier failure (%s) is over", dra_file_names[f],
                                 st->why ? st->why : "");
                st->failing = false;
                free(st->why);
                st->why = NULL;
                return;
        }
        st->failures++;
        if (st->failing && streq_ptr(st->why, why)) return;
        log_error("%s not written: %s; retried every %llu ms", dra_file_names[f], why,
                  (unsigned long long)(d->check_usec / 1000));
        st->failing = true;
        free(st->why);
        st->why = dp_strdup(why);
}

/* dp_dra_node_prepare/_unprepare saved the whole checkpoint. */
static void ckpt_saved(agent_dra *d) {
        d->ckpt_pending = false;
        file_result(d, DRA_FILE_CHECKPOINT, 0, NULL);
}

static void holds_changed(agent_dra *d) {
        if (d->holds_changed) d->holds_changed(d->userdata);
}

/* A claim as the API answered (or why not), for one NodePrepareResources. */
typedef struct claim_src {
        dp_kube_claim_fetch *fetch; /* in flight */
        uint64_t decoding;          /* the offload job decoding the answer; 0: none */
        bool needed;                /* not answered from the checkpoint */
        dp_object_list *list;       /* owns claim */
        const dp_resource_claim *claim;
        int code; /* < 0: msg says why */
        char *msg;
} claim_src;

typedef struct pending_prep {
        agent_dra *d;
        dp_grpc_call *call;
        struct pending_prep *next;
        bool v1;
        uint64_t start;
        size_t n, outstanding;
        claim_src *src;
        struct fetch_ctx *ctx;
} pending_prep;

typedef struct fetch_ctx {
        pending_prep *p;
        size_t i;
} fetch_ctx;

/* ---- slices ---------------------------------------------------------------- */

static int write_slices(agent_dra *d) {
        if (!d->slices_dir) return 0;
        size_t n = 0;
        dp_resource_slice *const *v = dp_dra_publisher_slices(d->pub, &n);
        _cleanup_strbuf_ dp_strbuf sb = DP_STRBUF_INIT;
        int r = dp_dra_slices_emit(v, n, DP_DOC_YAML, &sb);
        if (r < 0 || dp_strbuf_failed(&sb)) return r < 0 ? r : -ENOMEM;
        _cleanup_free_ char *name = dp_asprintf("%s-%s.yaml", d->node_name, d->driver);
        if (!name) return -ENOMEM;
        dp_error e = DP_ERROR_INIT;
        r = dp_mkdir_p(d->slices_dir, 0750);
        if (r < 0)
                dp_error_errno(&e, r, "create %s", d->slices_dir);
        else
                r = dp_dra_file_write(d->slices_dir, name, dp_strbuf_str(&sb), sb.len, 0644, &e);
        d->slices_pending = r < 0;
        file_result(d, DRA_FILE_SLICES, r, dp_error_msg(&e));
        if (r >= 0)
                log_info("ResourceSlices generation %lld: %zu slice(s) in %s/%s",
                         (long long)dp_dra_publisher_generation(d->pub), n, d->slices_dir, name);
        return r;
}

/* The generation of the slices a previous run wrote (0: none), so a
 * restart publishes a higher one instead of starting again at 1. */
static int64_t previous_generation(const char *slices_dir, const char *node, const char *driver) {
        if (!slices_dir) return 0;
        _cleanup_free_ char *path = dp_asprintf("%s/%s-%s.yaml", slices_dir, node, driver);
        _cleanup_(dp_object_list_freep) dp_object_list *l = dp_object_list_new();
        if (!path || !l || dp_model_load_file(path, l, NULL) < 0) return 0;
        int64_t g = 0;
        for (size_t i = 0; i < l->n; i++)
                if (l->items[i].hdr->kind == DP_KIND_RESOURCE_SLICE && l->items[i].slice->pool_generation > g &&
                    l->items[i].slice->pool_generation < INT64_MAX / 2)
                        g = l->items[i].slice->pool_generation;
        return g;
}

/* Hand the publisher's slices to the API publication (kube/slices.c). */
static void api_publish(agent_dra *d) {
        if (!d->kslices) return;
        size_t n = 0;
        dp_resource_slice *const *v = dp_dra_publisher_slices(d->pub, &n);
        char **texts = calloc(n + 1, sizeof *texts);
        int r = texts ? 0 : -ENOMEM;
        for (size_t i = 0; r >= 0 && i < n; i++) {
                _cleanup_(dp_doc_set_freep) dp_doc_set *set = dp_doc_set_new();
                dp_doc_node *node = set ? dp_resource_slice_encode(set, v[i]) : NULL;
                dp_strbuf sb = DP_STRBUF_INIT;
                if (node) dp_doc_emit(&sb, node, DP_DOC_JSON_COMPACT);
                dp_strbuf_putc(&sb, 0);
                if (!node || !(texts[i] = dp_strbuf_steal(&sb))) r = -ENOMEM;
        }
        if (r >= 0) r = dp_kube_slices_set(d->kslices, (const char *const *)texts, n);
        if (r < 0) log_error("ResourceSlices not handed to the API publisher: %s", strerror(-r));
        for (size_t i = 0; texts && i < n; i++)
                free(texts[i]);
        free(texts);
}

static int publish(agent_dra *d, bool force) {
        dp_dra_slice_options so = DP_DRA_SLICE_OPTIONS_INIT;
        so.rules = d->rules;
        so.n_rules = d->n_rules;
        so.default_effect = d->default_effect;
        dp_error e = DP_ERROR_INIT;
        int r = dp_dra_publisher_update(d->pub, d->inv, &so, &e);
        if (r < 0) {
                log_error("ResourceSlices not rebuilt: %s", dp_error_msg(&e));
                return r;
        }
        if (r > 0 || force) {
                api_publish(d);
                /* A failed write (disk full) never stops the driver or V1:
                 * it is said, counted and retried by the periodic check. */
                (void)write_slices(d);
        }
        return 0;
}

/* ---- health stream ------------------------------------------------------------- */

static int pack_health(const agent_dra *d, uint8_t **ret, size_t *ret_len) {
        size_t n = d->inv->n_devices;
        V1alpha1__DeviceHealth *h = calloc(n + 1, sizeof *h);
        V1alpha1__DeviceHealth **hp = calloc(n + 1, sizeof *hp);
        V1alpha1__DeviceIdentifier *id = calloc(n + 1, sizeof *id);
        int r = -ENOMEM;
        if (h && hp && id) {
                int64_t now = (int64_t)time(NULL);
                for (size_t i = 0; i < n; i++) {
                        const dp_dra_device *dev = &d->inv->devices[i];
                        id[i] = (V1alpha1__DeviceIdentifier)V1ALPHA1__DEVICE_IDENTIFIER__INIT;
                        id[i].pool_name = d->inv->pool;
                        id[i].device_name = dev->name;
                        h[i] = (V1alpha1__DeviceHealth)V1ALPHA1__DEVICE_HEALTH__INIT;
                        h[i].device = &id[i];
                        h[i].health =
                                dev->healthy ? V1ALPHA1__HEALTH_STATUS__HEALTHY : V1ALPHA1__HEALTH_STATUS__UNHEALTHY;
                        h[i].last_updated_time = now;
                        h[i].message = dev->healthy || !dev->fault_class ? (char *)"" : dev->fault_class;
                        hp[i] = &h[i];
                }
                V1alpha1__NodeWatchResourcesResponse resp = V1ALPHA1__NODE_WATCH_RESOURCES_RESPONSE__INIT;
                resp.devices = hp;
                resp.n_devices = n;
                r = dp_proto_pack(&resp.base, ret, ret_len);
        }
        dp_free_many(h, hp, id);
        return r;
}

static void on_health_cancel(dp_grpc_call *call, int status, void *ud) {
        agent_dra *d = ud;
        dp_grpc_streams_remove(&d->streams, call);
        dp_grpc_call_finish(call, status, NULL);
}

static void send_health(agent_dra *d, dp_grpc_call *only) {
        uint8_t *buf = NULL;
        size_t len = 0;
        if (pack_health(d, &buf, &len) < 0) {
                log_error("NodeWatchResources: out of memory");
                return;
        }
        dp_grpc_streams_send(&d->streams, only, buf, len, "cannot send");
        free(buf);
}

static void on_watch_resources(dp_grpc_call *call, void *ud) {
        agent_dra *d = ud;
        if (dp_grpc_streams_add(&d->streams, call) < 0) {
                dp_grpc_call_finish(call, DP_GRPC_RESOURCE_EXHAUSTED, "out of memory");
                return;
        }
        dp_grpc_call_set_cancel_handler(call, on_health_cancel, d);
        send_health(d, call);
}

/* ---- claims ---------------------------------------------------------------------- */

/* <claims-dir>/<namespace>/<name>.yaml (or .yml, .json): the claim as the
 * API server would return it; its uid must be the one the kubelet asked for. */
static int check_claim_names(const pb_claim *c, dp_error *err) {
        if (!c->namespace_ || !*c->namespace_ || !c->name || !*c->name || !c->uid || !*c->uid)
                return dp_error_set(err, -EINVAL, "claim: namespace, name and uid are required");
        if (strchr(c->namespace_, '/') || strchr(c->name, '/') || c->name[0] == '.' || c->namespace_[0] == '.')
                return dp_error_set(err, -EINVAL, "claim %s/%s: not a valid name", c->namespace_, c->name);
        return 0;
}

/* The found claim must be valid and be the one the kubelet asked for. */
static int check_claim(const pb_claim *c, dp_object o, const char *where, const dp_resource_claim **ret,
                       dp_error *err) {
        if (!o.hdr)
                return dp_error_set(err, -ENOENT, "%s: no ResourceClaim %s/%s in it", where, c->namespace_, c->name);
        if (dp_object_validate(o, err) < 0) return -EINVAL;
        const char *uid = o.claim->meta.uid;
        if (!uid || !streq(uid, c->uid))
                return dp_error_set(err, -ESTALE,
                                    "ResourceClaim %s/%s: uid %s, the kubelet asked for %s (claim replaced?)",
                                    c->namespace_, c->name, uid ? uid : "(none)", c->uid);
        *ret = o.claim;
        return 0;
}

/* The API server's answer to GET resourceclaims/NAME. */
static int api_claim(const pb_claim *c, long status, const char *body, size_t len, const char *errmsg,
                     dp_object_list *l, const dp_resource_claim **ret, dp_error *err) {
        if (status == 0)
                return dp_error_set(err, -EHOSTUNREACH, "ResourceClaim %s/%s: API server unreachable: %s",
                                    c->namespace_, c->name, errmsg ? errmsg : "no answer");
        if (status == 404)
                return dp_error_set(err, -ENOENT, "ResourceClaim %s/%s: not found (API server)", c->namespace_,
                                    c->name);
        if (status != 200) {
                char msg[300];
                dp_kube_status_message(body, len, msg, sizeof msg);
                return dp_error_set(err, -EIO, "ResourceClaim %s/%s: API server answered HTTP %ld: %s", c->namespace_,
                                    c->name, status, msg);
        }
        char where[300];
        snprintf(where, sizeof where, "API ResourceClaim %s/%s", c->namespace_, c->name);
        int r = dp_model_decode_buffer(body, len, where, l, err);
        if (r < 0) return r;
        return check_claim(c, dp_object_list_find(l, DP_KIND_RESOURCE_CLAIM, c->namespace_, c->name), where, ret, err);
}

static int load_claim(const agent_dra *d, const pb_claim *c, dp_object_list *l, const dp_resource_claim **ret,
                      dp_error *err) {
        int r = check_claim_names(c, err);
        if (r < 0) return r;
        if (!d->claims_dir)
                return dp_error_set(err, -ENOENT, "claim %s/%s: the driver has no claims directory (--claims-dir)",
                                    c->namespace_, c->name);
        static const char *const exts[] = {"yaml", "yml", "json"};
        r = -ENOENT;
        _cleanup_free_ char *path = NULL;
        for (size_t i = 0; i < ELEMENTSOF(exts) && r == -ENOENT; i++) {
                free(path);
                path = dp_asprintf("%s/%s/%s.%s", d->claims_dir, c->namespace_, c->name, exts[i]);
                if (!path) return -ENOMEM;
                struct stat st;
                if (stat(path, &st) < 0) continue;
                if (st.st_size > (off_t)CLAIM_FILE_MAX)
                        return dp_error_set(err, -E2BIG, "%s: larger than %u bytes", path, CLAIM_FILE_MAX);
                r = dp_model_load_file(path, l, err);
                if (r < 0) return r;
        }
        if (r == -ENOENT)
                return dp_error_set(err, -ENOENT, "ResourceClaim %s/%s: not found in %s/%s/", c->namespace_, c->name,
                                    d->claims_dir, c->namespace_);
        return check_claim(c, dp_object_list_find(l, DP_KIND_RESOURCE_CLAIM, c->namespace_, c->name), path, ret, err);
}

/* ---- claims rebuilt from their CDI specs, claims whose devices are unknown ---- */

/* A checkpoint entry rebuilt from a CDI spec (recover.h): it has no name. */
static bool recovered(const dp_dra_prepared_claim *c) { return !c->name || !*c->name; }

static char *unknown_key(const char *uid) { return dp_asprintf("claim uid %s", uid ? uid : ""); }

static ssize_t unknown_find(const agent_dra *d, const char *uid) {
        for (size_t i = 0; uid && i < d->n_unknown; i++)
                if (streq(d->unknown[i], uid)) return (ssize_t)i;
        return -1;
}

/* Every device is out of reach of both paths while claim uid's are unknown. */
static void unknown_mark(agent_dra *d, size_t i) {
        _cleanup_free_ char *key = unknown_key(d->unknown[i]);
        _cleanup_free_ char *why = dp_asprintf(
                "the devices of claim %s are unknown (%s); nothing is handed out until that claim is prepared "
                "again or unprepared",
                d->unknown[i], d->unknown_why[i]);
        if (!key || !why || dp_ledger_mark_unknown(d->ledger, key, DP_LEDGER_V1 | DP_LEDGER_V2, why) < 0)
                log_error("cannot mark the devices of claim %s unknown: out of memory", d->unknown[i]);
}

static void unknown_forget(agent_dra *d, size_t i) {
        _cleanup_free_ char *key = unknown_key(d->unknown[i]);
        if (key) dp_ledger_clear_unknown(d->ledger, key);
        dp_free_many(d->unknown[i], d->unknown_why[i]);
        d->unknown[i] = d->unknown[d->n_unknown - 1];
        d->unknown_why[i] = d->unknown_why[d->n_unknown - 1];
        d->n_unknown--;
}

static void hold_saved(agent_dra *d, const dp_dra_prepared_claim *c) {
        _cleanup_free_ char *holder = dp_asprintf("claim %s/%s (%s)", c->namespace, c->name, c->uid);
        if (!holder) return;
        for (size_t k = 0; k < c->n_devices; k++) {
                const char *dev = c->devices[k].device;
                dp_error e = DP_ERROR_INIT;
                int r = dp_ledger_acquire(d->ledger, DP_LEDGER_V2, holder, &dev, 1,
                                          DP_LEDGER_REPLAY | (c->devices[k].share_id ? DP_LEDGER_SHARED : 0), &e);
                if (r > 0) /* kept: its container may be running (docs/dra-driver.md) */
                        log_error("conflict: %s (driver checkpoint and kubelet checkpoint); the device is withheld "
                                  "from new V1 allocations and new claims",
                                  dp_error_msg(&e));
                else if (r < 0)
                        log_warning("checkpoint claim %s: %s", holder, dp_error_msg(&e));
        }
}

/* The kubelet prepares a claim we rebuilt from its spec, or one whose
 * devices are unknown: prepare it in full from the claim (names, requests,
 * metadata come back), in place of what we had; on failure what we had
 * stays. */
static int reprepare(agent_dra *d, const char *uid, const dp_dra_prepare_input *in, const dp_resource_claim *claim,
                     const dp_dra_node_dirs *dirs, dp_dra_prepared_claim *ret, dp_error *err) {
        dp_dra_prepared_claim *old = NULL;
        ssize_t u = unknown_find(d, uid);
        _cleanup_free_ char *key = unknown_key(uid);
        if (!key) return dp_error_set(err, -ENOMEM, "out of memory");
        if (u >= 0) dp_ledger_clear_unknown(d->ledger, key);
        if (dp_dra_checkpoint_remove(d->ckpt, uid, &old) == 0) {
                _cleanup_free_ char *holder = dp_asprintf("claim %s/%s (%s)", old->namespace, old->name, old->uid);
                if (!holder) {
                        (void)dp_dra_checkpoint_put(d->ckpt, old);
                        dp_dra_prepared_claim_free(old);
                        return dp_error_set(err, -ENOMEM, "out of memory");
                }
                dp_ledger_release(d->ledger, holder);
        }
        int r = dp_dra_node_prepare(d->ckpt, d->ledger, in, claim, dirs, ret, err);
        if (r < 0) {
                if (old && dp_dra_checkpoint_put(d->ckpt, old) >= 0) hold_saved(d, old);
                if (u >= 0) unknown_mark(d, (size_t)u);
        } else if (u >= 0) {
                unknown_forget(d, (size_t)u);
                log_info("claim %s prepared again: its devices are known", uid);
        }
        dp_dra_prepared_claim_free(old);
        return r;
}

/* src: the claim read from the API (NULL: read it from --claims-dir). */
static int prepare_one(agent_dra *d, const pb_claim *c, const claim_src *src, dp_dra_prepared_claim *ret,
                       dp_error *err) {
        _cleanup_(dp_object_list_freep) dp_object_list *l = dp_object_list_new();
        if (!l) return -ENOMEM;
        /* A claim already prepared is answered from the checkpoint even when
         * its file is gone (the kubelet retries after a restart). */
        dp_dra_prepared_claim *done = c->uid ? dp_dra_checkpoint_find(d->ckpt, c->uid) : NULL;
        if (done && !recovered(done)) return dp_dra_prepared_claim_copy(ret, done);
        const dp_resource_claim *claim = NULL;
        int r;
        if (src) {
                if (!src->claim)
                        return dp_error_set(err, src->code < 0 ? src->code : -EIO, "%s",
                                            src->msg ? src->msg : "claim not read");
                claim = src->claim;
        } else if ((r = load_claim(d, c, l, &claim, err)) < 0)
                return r;
        size_t n = 0;
        dp_resource_slice *const *v = dp_dra_publisher_slices(d->pub, &n);
        dp_dra_prepare_input in = {.inv = d->inv, .slices = v, .n_slices = n};
        dp_dra_node_dirs dirs = {.cdi_dir = d->cdi_dir, .state_dir = d->state_dir};
        if (done || unknown_find(d, c->uid) >= 0) return reprepare(d, c->uid, &in, claim, &dirs, ret, err);
        return dp_dra_node_prepare(d->ckpt, d->ledger, &in, claim, &dirs, ret, err);
}

/* Fill one response entry from a prepared claim (pointers borrowed from it). */
static int fill_devices(const dp_dra_prepared_claim *pc, bool v1, pb_prep_one *one, pb_device **ret_devs) {
        pb_device *devs = calloc(pc->n_devices + 1, sizeof *devs);
        pb_device **dp = calloc(pc->n_devices + 1, sizeof *dp);
        if (!devs || !dp) {
                dp_free_many(devs, dp);
                return -ENOMEM;
        }
        for (size_t k = 0; k < pc->n_devices; k++) {
                const dp_dra_prepared_device *pd = &pc->devices[k];
                devs[k] = (pb_device)K8S__IO__KUBELET__PKG__APIS__DRA__V1__DEVICE__INIT;
                devs[k].request_names = pd->requests;
                devs[k].n_request_names = pd->n_requests;
                devs[k].pool_name = pd->pool;
                devs[k].device_name = pd->device;
                devs[k].cdi_device_ids = pd->cdi_ids;
                devs[k].n_cdi_device_ids = pd->n_cdi_ids;
                if (v1 && pd->share_id) {
                        devs[k].share_id_presence_case =
                                K8S__IO__KUBELET__PKG__APIS__DRA__V1__DEVICE__SHARE_ID_PRESENCE_SHARE_ID;
                        devs[k].share_id = pd->share_id;
                }
                dp[k] = &devs[k];
        }
        one->devices = dp;
        one->n_devices = pc->n_devices;
        *ret_devs = devs;
        return 0;
}

/* A claim that failed: its message kept in *ret_slot (owned by the reply's
 * caller) and set as the reply entry's error, and logged. -ENOMEM when the
 * message could not be kept. */
static int claim_error(const char *rpc, const pb_claim *c, const dp_error *e, char **ret_slot, char **ret_error) {
        log_warning("%s %s/%s (%s): %s", rpc, c->namespace_, c->name, c->uid, dp_error_msg(e));
        *ret_slot = *ret_error = strdup(dp_error_msg(e));
        return *ret_slot ? 0 : -ENOMEM;
}

static int prepare_reply(agent_dra *d, const pb_prep_req *req, bool v1, const claim_src *src, uint8_t **ret,
                         size_t *ret_len) {
        size_t n = req->n_claims;
        if (n > DP_DRA_CHECKPOINT_MAX_CLAIMS) return -E2BIG;
        dp_dra_prepared_claim *pcs = calloc(n + 1, sizeof *pcs);
        char **errs = calloc(n + 1, sizeof *errs);
        pb_device **devs = calloc(n + 1, sizeof *devs);
        pb_prep_one *ones = calloc(n + 1, sizeof *ones);
        pb_prep_entry *ents = calloc(n + 1, sizeof *ents);
        pb_prep_entry **entp = calloc(n + 1, sizeof *entp);
        int r = pcs && errs && devs && ones && ents && entp ? 0 : -ENOMEM;
        bool changed = false;
        for (size_t i = 0; r >= 0 && i < n; i++) {
                const pb_claim *c = req->claims[i];
                dp_error e = DP_ERROR_INIT;
                ones[i] = (pb_prep_one)K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_PREPARE_RESOURCE_RESPONSE__INIT;
                int q = prepare_one(d, c, src ? &src[i] : NULL, &pcs[i], &e);
                if (q == -ENOMEM)
                        r = q;
                else if (q < 0) {
                        if (claim_error("NodePrepareResources", c, &e, &errs[i], &ones[i].error) < 0) r = -ENOMEM;
                        if (d->metrics) d->metrics->claim_errors++;
                } else {
                        if (q > 0) {
                                ckpt_saved(d);
                                log_info("prepared %s/%s (%s): %zu device(s)", c->namespace_, c->name, c->uid,
                                         pcs[i].n_devices);
                                changed = true;
                        }
                        if (fill_devices(&pcs[i], v1, &ones[i], &devs[i]) < 0) r = -ENOMEM;
                }
                ents[i] = (pb_prep_entry)
                        K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_PREPARE_RESOURCES_RESPONSE__CLAIMS_ENTRY__INIT;
                ents[i].key = c->uid;
                ents[i].value = &ones[i];
                entp[i] = &ents[i];
        }
        if (changed) holds_changed(d);
        if (r >= 0) {
                pb_prep_resp resp = K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_PREPARE_RESOURCES_RESPONSE__INIT;
                resp.claims = entp;
                resp.n_claims = n;
                r = dp_proto_pack(&resp.base, ret, ret_len);
        }
        for (size_t i = 0; i < n && pcs; i++)
                dp_dra_prepared_claim_done(&pcs[i]);
        for (size_t i = 0; i < n && ones; i++)
                free(ones[i].devices);
        for (size_t i = 0; i < n && errs; i++)
                free(errs[i]);
        for (size_t i = 0; i < n && devs; i++)
                free(devs[i]);
        dp_free_many(pcs, errs, devs, ones, ents, entp);
        return r;
}

/* A claim whose devices were unknown is unprepared: its spec goes, and
 * with it the mark. */
static int unprepare_unknown(agent_dra *d, const char *uid, dp_error *err) {
        _cleanup_free_ char *name = dp_dra_cdi_spec_file_name(d->inv->cdi_kind, uid);
        if (!name) return dp_error_set(err, -ENOMEM, "out of memory");
        int r = dp_dra_file_remove(d->cdi_dir, name, err);
        if (r < 0) return r;
        unknown_forget(d, (size_t)unknown_find(d, uid));
        log_info("claim %s unprepared: its devices are known again", uid);
        return 1;
}

static int unprepare_reply(agent_dra *d, const pb_unprep_req *req, uint8_t **ret, size_t *ret_len) {
        size_t n = req->n_claims;
        if (n > DP_DRA_CHECKPOINT_MAX_CLAIMS) return -E2BIG;
        char **errs = calloc(n + 1, sizeof *errs);
        pb_unprep_one *ones = calloc(n + 1, sizeof *ones);
        pb_unprep_entry *ents = calloc(n + 1, sizeof *ents);
        pb_unprep_entry **entp = calloc(n + 1, sizeof *entp);
        int r = errs && ones && ents && entp ? 0 : -ENOMEM;
        bool changed = false;
        dp_dra_node_dirs dirs = {.cdi_dir = d->cdi_dir, .state_dir = d->state_dir};
        for (size_t i = 0; r >= 0 && i < n; i++) {
                const pb_claim *c = req->claims[i];
                dp_error e = DP_ERROR_INIT;
                ones[i] = (pb_unprep_one)K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_UNPREPARE_RESOURCE_RESPONSE__INIT;
                int q = c->uid && *c->uid
                                ? dp_dra_node_unprepare(d->ckpt, d->ledger, c->uid, &dirs, &e)
                                : dp_error_set(&e, -EINVAL, "claim %s/%s: uid is required", c->namespace_, c->name);
                if (q > 0) ckpt_saved(d);
                if (q == 0 && unknown_find(d, c->uid) >= 0) q = unprepare_unknown(d, c->uid, &e);
                if (q == -ENOMEM)
                        r = q;
                else if (q < 0) {
                        if (claim_error("NodeUnprepareResources", c, &e, &errs[i], &ones[i].error) < 0) r = -ENOMEM;
                } else if (q > 0) {
                        log_info("unprepared %s/%s (%s)", c->namespace_, c->name, c->uid);
                        changed = true;
                }
                ents[i] = (pb_unprep_entry)
                        K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_UNPREPARE_RESOURCES_RESPONSE__CLAIMS_ENTRY__INIT;
                ents[i].key = c->uid;
                ents[i].value = &ones[i];
                entp[i] = &ents[i];
        }
        if (changed) holds_changed(d);
        if (r >= 0) {
                pb_unprep_resp resp = K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_UNPREPARE_RESOURCES_RESPONSE__INIT;
                resp.claims = entp;
                resp.n_claims = n;
                r = dp_proto_pack(&resp.base, ret, ret_len);
        }
        for (size_t i = 0; i < n && errs; i++)
                free(errs[i]);
        dp_free_many(errs, ones, ents, entp);
        return r;
}

int agent_dra_reply(agent_dra *d, bool prepare, bool v1, const ProtobufCMessage *req, uint8_t **ret, size_t *ret_len) {
        assert_return(d && req && ret && ret_len, -EINVAL);
        return prepare ? prepare_reply(d, (const pb_prep_req *)req, v1, NULL, ret, ret_len)
                       : unprepare_reply(d, (const pb_unprep_req *)req, ret, ret_len);
}

static void observe(agent_dra *d, bool prepare, uint64_t start) {
        if (!d->metrics) return;
        double secs = (double)(dp_loop_now() - start) / 1e6;
        agent_histogram_observe(prepare ? &d->metrics->prepare : &d->metrics->unprepare, secs);
        if (prepare)
                d->metrics->prepare_calls++;
        else
                d->metrics->unprepare_calls++;
}

static void finish_reply(dp_grpc_call *call, int r, uint8_t *buf, size_t len) {
        if (r == -E2BIG)
                dp_grpc_call_finishf(call, DP_GRPC_INVALID_ARGUMENT, "more than %d claims",
                                     DP_DRA_CHECKPOINT_MAX_CLAIMS);
        else if (r < 0)
                dp_grpc_call_finish(call, DP_GRPC_RESOURCE_EXHAUSTED, "out of memory");
        else if (dp_grpc_call_send(call, buf, len) < 0)
                dp_grpc_call_finish(call, DP_GRPC_UNAVAILABLE, "cannot send");
        else
                dp_grpc_call_finish(call, DP_GRPC_OK, NULL);
}

/* ---- NodePrepareResources through the API -------------------------------------- */

static pending_prep *pending_free(pending_prep *p) {
        if (!p) return NULL;
        agent_dra *d = p->d;
        for (pending_prep **q = &d->pending; *q; q = &(*q)->next)
                if (*q == p) {
                        *q = p->next;
                        break;
                }
        for (size_t i = 0; i < p->n && p->src; i++) {
                dp_kube_claim_fetch_cancel(p->src[i].fetch);
                dp_object_list_free(p->src[i].list);
                free(p->src[i].msg);
        }
        dp_free_many(p->src, p->ctx);
        free(p);
        return NULL;
}

static void pending_complete(pending_prep *p) {
        agent_dra *d = p->d;
        uint8_t *buf = NULL;
        size_t len = 0;
        int r = prepare_reply(d, (const pb_prep_req *)dp_grpc_call_request_msg(p->call), p->v1, p->src, &buf, &len);
        finish_reply(p->call, r, buf, len);
        free(buf);
        observe(d, true, p->start);
        pending_free(p);
}

/* Claim answers up to this long are decoded on the loop (a few ms at
 * worst: 64 KiB of tiny keys); longer ones on the offload thread, since a
 * legal 3.5 MiB claim of tiny keys takes hundreds of ms (issue 21). */
#define CLAIM_INLINE_DECODE_MAX (64u << 10)

/* A claim answer decoded on the offload thread. */
typedef struct claim_decoded {
        dp_object_list *list;
        int code;
        char *msg; /* code < 0: why */
} claim_decoded;

static void claim_decoded_free(void *p, uint64_t tag) {
        claim_decoded *r = p;
        if (!r) return;
        dp_object_list_free(r->list);
        free(r->msg);
        free(r);
}

static void claim_decoded_freep(claim_decoded **r) { claim_decoded_free(*r, 0); }

/* The offload thread's work: pure (no driver state, no logging). */
static void *decode_claim(const char *data, size_t len, uint64_t tag) {
        claim_decoded *r = calloc(1, sizeof *r);
        if (!r) return NULL;
        dp_error e = DP_ERROR_INIT;
        r->list = dp_object_list_new();
        r->code = r->list ? dp_model_decode_buffer(data, len, "API answer", r->list, &e) : -ENOMEM;
        if (r->code < 0) r->msg = strdup(e.msg[0] ? e.msg : "out of memory");
        return r;
}

/* One claim of p settled (cs->code, and e when it is < 0). */
static void claim_settled(pending_prep *p, claim_src *cs, const dp_error *e) {
        if (cs->code < 0) {
                cs->claim = NULL;
                free(cs->msg);
                cs->msg = strdup(e->msg[0] ? e->msg : strerror(-cs->code));
        }
        if (--p->outstanding == 0) pending_complete(p);
}

static const pb_claim *claim_of(const pending_prep *p, size_t i) {
        return ((const pb_prep_req *)dp_grpc_call_request_msg(p->call))->claims[i];
}

/* The claim whose answer offload job tag decodes; false: its
 * NodePrepareResources is gone (cancelled by the kubelet). */
static bool find_decoding(agent_dra *d, uint64_t tag, pending_prep **ret_p, size_t *ret_i) {
        for (pending_prep *p = d->pending; p; p = p->next)
                for (size_t i = 0; i < p->n; i++)
                        if (p->src[i].decoding == tag) {
                                *ret_p = p;
                                *ret_i = i;
                                return true;
                        }
        return false;
}

/* A long answer decoded: settle its claim, if it is still asked for. */
static void on_claim_decoded(void *result, uint64_t tag, void *ud) {
        _cleanup_(claim_decoded_freep) claim_decoded *r = result;
        pending_prep *p;
        size_t i;
        if (!find_decoding(ud, tag, &p, &i)) return;
        claim_src *cs = &p->src[i];
        const pb_claim *c = claim_of(p, i);
        char where[300];
        snprintf(where, sizeof where, "API ResourceClaim %s/%s", c->namespace_, c->name);
        dp_error e = DP_ERROR_INIT;
        cs->decoding = 0;
        if (!r || r->code < 0)
                cs->code = dp_error_set(&e, r ? r->code : -ENOMEM, "%s: %s", where, r ? r->msg : "out of memory");
        else {
                cs->list = TAKE_PTR(r->list);
                dp_object o = dp_object_list_find(cs->list, DP_KIND_RESOURCE_CLAIM, c->namespace_, c->name);
                cs->code = check_claim(c, o, where, &cs->claim, &e);
        }
        claim_settled(p, cs, &e);
}

/* Hand a long answer to the offload thread; false: decode it here. */
static bool decode_later(agent_dra *d, claim_src *cs, const char *body, size_t len) {
        if (!d->offload && dp_kube_offload_new(dp_kube_client_loop(d->kube), decode_claim, on_claim_decoded,
                                               claim_decoded_free, d, &d->offload) < 0)
                return false;
        if (dp_kube_offload_submit(d->offload, body, len, d->decode_seq + 1) < 0) return false;
        cs->decoding = ++d->decode_seq;
        return true;
}

static void on_claim_fetched(long status, const char *body, size_t len, const char *errmsg, void *ud) {
        fetch_ctx *x = ud;
        pending_prep *p = x->p;
        claim_src *cs = &p->src[x->i];
        const pb_claim *c = claim_of(p, x->i);
        cs->fetch = NULL; /* freed by kube/claims.c after this returns */
        dp_error e = DP_ERROR_INIT;
        /* No Kubernetes object is that long (kube-apiserver takes 3 MiB). */
        if (len > DP_KUBE_MAX_LINE)
                cs->code = dp_error_set(&e, -E2BIG,
                                        "ResourceClaim %s/%s: the API server's answer is %zu bytes, longer than "
                                        DP_KUBE_MAX_LINE_TEXT " (no Kubernetes object is): not decoded",
                                        c->namespace_, c->name, len);
        else if (status == 200 && len > CLAIM_INLINE_DECODE_MAX && decode_later(p->d, cs, body, len))
                return; /* on_claim_decoded settles it */
        else {
                cs->list = dp_object_list_new();
                cs->code = cs->list ? api_claim(c, status, body, len, errmsg, cs->list, &cs->claim, &e) : -ENOMEM;
        }
        claim_settled(p, cs, &e);
}

static void on_prepare_cancel(dp_grpc_call *call, int status, void *ud) {
        pending_prep *p = ud;
        log_warning("NodePrepareResources cancelled by the kubelet while reading claims from the API");
        pending_free(p);
        dp_grpc_call_finish(call, status, NULL);
}

/* Reads the claims not in the checkpoint from the API; answers when all
 * are read (at once when none is needed). */
static void prepare_async(agent_dra *d, dp_grpc_call *call, bool v1, uint64_t start) {
        const pb_prep_req *req = (const pb_prep_req *)dp_grpc_call_request_msg(call);
        size_t n = req->n_claims;
        if (n > DP_DRA_CHECKPOINT_MAX_CLAIMS) {
                finish_reply(call, -E2BIG, NULL, 0);
                return;
        }
        pending_prep *p = calloc(1, sizeof *p);
        if (!p || !(p->src = calloc(n + 1, sizeof *p->src)) || !(p->ctx = calloc(n + 1, sizeof *p->ctx))) {
                if (p) {
                        free(p->src);
                        free(p);
                }
                finish_reply(call, -ENOMEM, NULL, 0);
                return;
        }
        p->d = d;
        p->call = call;
        p->v1 = v1;
        p->start = start;
        p->n = n;
        p->next = d->pending;
        d->pending = p;
        /* Answer a little before the kubelet gives up, with what we know. */
        uint64_t now = dp_loop_now(), dl = dp_grpc_call_deadline(call);
        uint64_t deadline = dl > now + 1000000 ? dl - 500000 : now + 20000000;
        deadline = DP_MIN(deadline, now + 60000000);
        for (size_t i = 0; i < n; i++) {
                const pb_claim *c = req->claims[i];
                claim_src *cs = &p->src[i];
                const dp_dra_prepared_claim *saved = c->uid ? dp_dra_checkpoint_find(d->ckpt, c->uid) : NULL;
                if (saved && !recovered(saved)) continue; /* a rebuilt entry is completed from the claim */
                cs->needed = true;
                dp_error e = DP_ERROR_INIT;
                if ((cs->code = check_claim_names(c, &e)) < 0) {
                        cs->msg = strdup(e.msg);
                        continue;
                }
                p->ctx[i] = (fetch_ctx){p, i};
                int r = dp_kube_claim_fetch_start(d->kube, c->namespace_, c->name, deadline, on_claim_fetched,
                                                  &p->ctx[i], &cs->fetch);
                if (r < 0) {
                        cs->code = r;
                        cs->msg = dp_asprintf("ResourceClaim %s/%s: cannot ask the API server: %s", c->namespace_,
                                              c->name, strerror(-r));
                        continue;
                }
                p->outstanding++;
        }
        if (p->outstanding == 0) {
                pending_complete(p);
                return;
        }
        dp_grpc_call_set_cancel_handler(call, on_prepare_cancel, p);
}

static void on_node_call(dp_grpc_call *call, bool prepare) {
        agent_dra *d = dp_grpc_call_get_userdata(call);
        uint64_t start = dp_loop_now();
        bool v1 = strncmp(dp_grpc_call_path(call), DRA_V1_PREFIX, strlen(DRA_V1_PREFIX)) == 0;
        if (prepare && d->kube) {
                prepare_async(d, call, v1, start);
                return;
        }
        uint8_t *buf = NULL;
        size_t len = 0;
        int r = agent_dra_reply(d, prepare, v1, dp_grpc_call_request_msg(call), &buf, &len);
        finish_reply(call, r, buf, len);
        free(buf);
        observe(d, prepare, start);
}

static void on_prepare(dp_grpc_call *call, void *ud) {
        dp_grpc_call_set_userdata(call, ud);
        on_node_call(call, true);
}

static void on_unprepare(dp_grpc_call *call, void *ud) {
        dp_grpc_call_set_userdata(call, ud);
        on_node_call(call, false);
}

/* ---- registration ----------------------------------------------------------------- */

static void on_get_info(dp_grpc_call *call, void *ud) {
        agent_dra *d = ud;
        static char *versions[] = {(char *)"v1.DRAPlugin", (char *)"v1beta1.DRAPlugin",
                                   (char *)"v1alpha1.DRAResourceHealth"};
        Pluginregistration__PluginInfo info = PLUGINREGISTRATION__PLUGIN_INFO__INIT;
        info.type = (char *)"DRAPlugin";
        info.name = d->driver;
        info.endpoint = d->dra_sock_path;
        info.supported_versions = versions;
        info.n_supported_versions = ELEMENTSOF(versions);
        dp_grpc_call_reply_msg(call, &info.base);
}

static void on_notify(dp_grpc_call *call, void *ud) {
        agent_dra *d = ud;
        const Pluginregistration__RegistrationStatus *st =
                (const Pluginregistration__RegistrationStatus *)dp_grpc_call_request_msg(call);
        if (!st->plugin_registered) {
                log_error("kubelet refused the registration of %s: %s", d->driver, st->error ? st->error : "");
                dp_grpc_call_finishf(call, DP_GRPC_UNKNOWN, "registration failed: %s", st->error ? st->error : "");
                return;
        }
        d->registrations++;
        log_info("registered with the kubelet as DRA driver %s (endpoint %s)", d->driver, d->dra_sock_path);
        Pluginregistration__RegistrationStatusResponse resp = PLUGINREGISTRATION__REGISTRATION_STATUS_RESPONSE__INIT;
        dp_grpc_call_reply_msg(call, &resp.base);
}

static int serve_dra(agent_dra *d) {
        d->srv = dp_grpc_server_free(d->srv);
        int r = dp_grpc_server_new(&d->srv);
        if (r < 0) return r;
        static const char *const methods[] = {"NodePrepareResources", "NodeUnprepareResources"};
        static const char *const prefixes[] = {DRA_V1_PREFIX, DRA_V1BETA1_PREFIX};
        for (size_t p = 0; p < 2; p++)
                for (size_t m = 0; m < 2; m++) {
                        _cleanup_free_ char *path = dp_asprintf("%s%s", prefixes[p], methods[m]);
                        if (!path) return -ENOMEM;
                        r = dp_grpc_server_add_method(
                                d->srv, path, DP_GRPC_UNARY,
                                m == 0 ? &k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__descriptor
                                       : &k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_request__descriptor,
                                m == 0 ? on_prepare : on_unprepare, d);
                        if (r < 0) return r;
                }
        /* v1 DRAResourceHealth has the same messages as v1alpha1. */
        if ((r = dp_grpc_server_add_method(
                     d->srv, "/v1alpha1.DRAResourceHealth/NodeWatchResources", DP_GRPC_SERVER_STREAMING,
                     &v1alpha1__node_watch_resources_request__descriptor, on_watch_resources, d)) < 0 ||
            (r = dp_grpc_server_add_method(d->srv, "/v1.DRAResourceHealth/NodeWatchResources", DP_GRPC_SERVER_STREAMING,
                                           &v1alpha1__node_watch_resources_request__descriptor, on_watch_resources,
                                           d)) < 0 ||
            (r = agent_dra_list_serve(d->srv, &d->ckpt)) < 0) /* devplane's PreparedClaims List */
                return r;
        return dp_grpc_server_listen_unix(d->srv, d->loop, d->dra_sock_path, 0600);
}

static int serve_registration(agent_dra *d) {
        d->reg_srv = dp_grpc_server_free(d->reg_srv);
        int r = dp_grpc_server_new(&d->reg_srv);
        if (r < 0) return r;
        if ((r = dp_grpc_server_add_method(d->reg_srv, "/pluginregistration.Registration/GetInfo", DP_GRPC_UNARY,
                                           &pluginregistration__info_request__descriptor, on_get_info, d)) < 0 ||
            (r = dp_grpc_server_add_method(d->reg_srv, "/pluginregistration.Registration/NotifyRegistrationStatus",
                                           DP_GRPC_UNARY, &pluginregistration__registration_status__descriptor,
                                           on_notify, d)) < 0)
                return r;
        return dp_grpc_server_listen_unix(d->reg_srv, d->loop, d->reg_sock_path, 0600);
}

/* Someone removed our socket (a kubelet cleaning up, an operator): serve it
 * again, so the plugin watcher finds it on its next walk or event. */
static int on_reg_dir_event(dp_loop_source *s, const struct inotify_event *ev, void *ud) {
        agent_dra *d = ud;
        if (!ev->len || !streq(ev->name, d->reg_sock_name)) return 0;
        struct stat st;
        if (stat(d->reg_sock_path, &st) == 0 && S_ISSOCK(st.st_mode)) return 0; /* our own re-listen */
        log_info("registration socket %s removed: serving it again", d->reg_sock_path);
        int r = serve_registration(d);
        if (r < 0) log_error("cannot serve %s: %s", d->reg_sock_path, strerror(-r));
        return 0;
}

static int on_state_dir_event(dp_loop_source *s, const struct inotify_event *ev, void *ud) {
        agent_dra *d = ud;
        if (!ev->len || !streq(ev->name, AGENT_DRA_SOCKET_NAME)) return 0;
        struct stat st;
        if (stat(d->dra_sock_path, &st) == 0 && S_ISSOCK(st.st_mode)) return 0; /* our own re-listen */
        log_info("%s removed: serving it again", d->dra_sock_path);
        dp_grpc_streams_finish(&d->streams, DP_GRPC_UNAVAILABLE, "restarting");
        int r = serve_dra(d);
        if (r < 0) log_error("cannot serve %s: %s", d->dra_sock_path, strerror(-r));
        return 0;
}

/* ---- life cycle --------------------------------------------------------------------- */

/* The checkpoint's claims hold their devices again (a restart), and
 * claims whose devices are unknown block everything. */
static void replay_checkpoint(agent_dra *d) {
        for (size_t i = 0; i < d->ckpt->n_claims; i++)
                hold_saved(d, &d->ckpt->claims[i]);
        for (size_t i = 0; i < d->n_unknown; i++)
                unknown_mark(d, i);
}

/* At start: temp files and orphaned specs go; a corrupt or missing
 * checkpoint is rebuilt from the specs we wrote (recover.h), never by
 * forgetting. */
static int recover_state(agent_dra *d, bool rebuild, dp_error *err) {
        dp_dra_recovery rec;
        int r = dp_dra_recover_dirs(d->ckpt, d->inv, d->cdi_dir, d->state_dir, DP_DRA_CHECKPOINT_NAME, rebuild, &rec,
                                    err);
        if (r < 0) return r;
        d->unknown = TAKE_PTR(rec.unknown);
        d->unknown_why = TAKE_PTR(rec.unknown_why);
        d->n_unknown = rec.n_unknown;
        rec.n_unknown = 0;
        if (rec.recovered) {
                dp_error e = DP_ERROR_INIT;
                int q = dp_dra_checkpoint_save(d->ckpt, d->state_dir, DP_DRA_CHECKPOINT_NAME, &e);
                d->ckpt_pending = q < 0;
                if (q < 0) file_result(d, DRA_FILE_CHECKPOINT, q, dp_error_msg(&e));
                log_warning("driver checkpoint rebuilt: %zu claim(s) recovered from their CDI specs, %zu unknown",
                            rec.recovered, d->n_unknown);
        }
        dp_dra_recovery_done(&rec);
        return 0;
}

/* The CDI specs against the checkpoint's copies (F7 of issue 21): a spec
 * deleted or damaged while its claim is prepared would leave the pod with a
 * CDI id nothing resolves. */
static void check_cdi(agent_dra *d) {
        dp_dra_cdi_check chk;
        dp_error e = DP_ERROR_INIT;
        if (d->ckpt->n_claims) (void)dp_mkdir_p(d->cdi_dir, 0750); /* a removed directory comes back too */
        int r = dp_dra_cdi_reconcile(d->ckpt, d->cdi_dir, &chk, &e);
        d->cdi_rewritten += chk.rewritten;
        if (r >= 0 || chk.failed) file_result(d, DRA_FILE_CDI, r, dp_error_msg(&e));
        if (chk.no_copy != d->cdi_no_copy && chk.no_copy)
                log_warning("%zu prepared claim(s) of an older checkpoint keep no copy of their CDI spec: a lost "
                            "spec of theirs cannot be written again until the claim is prepared again",
                            chk.no_copy);
        d->cdi_no_copy = chk.no_copy;
}

/* Every check_usec: the writes that failed are tried again (the cause,
 * a full disk, may be gone), then the CDI specs are checked. */
static int on_check(dp_loop_source *s, uint64_t now, void *ud) {
        agent_dra *d = ud;
        if (d->slices_pending) (void)write_slices(d);
        if (d->ckpt_pending) {
                dp_error e = DP_ERROR_INIT;
                int r = dp_dra_checkpoint_save(d->ckpt, d->state_dir, DP_DRA_CHECKPOINT_NAME, &e);
                d->ckpt_pending = r < 0;
                file_result(d, DRA_FILE_CHECKPOINT, r, dp_error_msg(&e));
        }
        check_cdi(d);
        dp_loop_source_set_time(s, now + d->check_usec);
        return 0;
}

void agent_dra_metrics_write(const agent_dra *d, dp_strbuf *o) {
        if (!d) return;
        dp_strbuf_puts(o, "# HELP devplane_dra_file_write_failing 1 while the DRA driver cannot write this file "
                          "(retried by the periodic check; the log says why).\n"
                          "# TYPE devplane_dra_file_write_failing gauge\n");
        for (size_t f = 0; f < DRA_FILE_MAX; f++)
                dp_strbuf_printf(o, "devplane_dra_file_write_failing{file=\"%s\"} %d\n", dra_file_names[f],
                                 d->files[f].failing);
        dp_strbuf_puts(o, "# HELP devplane_dra_file_write_failures_total Failed writes of this file.\n"
                          "# TYPE devplane_dra_file_write_failures_total counter\n");
        for (size_t f = 0; f < DRA_FILE_MAX; f++)
                dp_strbuf_printf(o, "devplane_dra_file_write_failures_total{file=\"%s\"} %llu\n", dra_file_names[f],
                                 (unsigned long long)d->files[f].failures);
        dp_strbuf_printf(o,
                         "# HELP devplane_dra_cdi_specs_rewritten_total CDI specs found missing or damaged and "
                         "written again from the driver checkpoint.\n"
                         "# TYPE devplane_dra_cdi_specs_rewritten_total counter\n"
                         "devplane_dra_cdi_specs_rewritten_total %llu\n",
                         (unsigned long long)d->cdi_rewritten);
}

/* The driver checkpoint, or an empty one to be rebuilt from the CDI specs
 * (*ret_rebuild) when it is missing, corrupt, or no regular file (a
 * directory, a symlink to /dev/zero, a FIFO: dp_read_file's -EISDIR,
 * -EINVAL): not trusted, not lost either: set aside as .corrupt. Other
 * read errors (-EACCES, -EIO) stop the driver: it cannot know what it holds. */
static int load_checkpoint(agent_dra *d, bool *ret_rebuild, dp_error *err) {
        _cleanup_free_ char *ck = dp_asprintf("%s/%s", d->state_dir, DP_DRA_CHECKPOINT_NAME);
        if (!ck) return -ENOMEM;
        int r = dp_dra_checkpoint_load(ck, &d->ckpt, err);
        *ret_rebuild = r == -ENOENT;
        if (r == -EBADMSG || r == -E2BIG || r == -EISDIR || r == -EINVAL || r == -ELOOP) {
                dp_error se = DP_ERROR_INIT;
                _cleanup_free_ char *to = NULL;
                int q = dp_dra_file_set_aside(ck, &to, &se);
                log_error("%s; rebuilding it from the CDI specs in %s (%s%s)", dp_error_msg(err), d->cdi_dir,
                          q < 0 ? "it could not be set aside: " : "the file is kept as ",
                          q < 0 ? dp_error_msg(&se) : to);
                if (err) *err = (dp_error)DP_ERROR_INIT;
                *ret_rebuild = true;
                r = -ENOENT;
        }
        if (r == -ENOENT) {
                d->ckpt = dp_dra_checkpoint_new(d->driver, d->node_name);
                r = d->ckpt ? 0 : -ENOMEM;
        }
        return r;
}

/* After a rebuild, the claims we can read (--claims-dir) complete what the
 * specs did not say: each claim whose uid is a rebuilt entry or an unknown
 * claim is prepared again in full (names, requests, metadata), as its next
 * NodePrepareResources would. Only regular files are read. */
static size_t incomplete(const agent_dra *d) {
        size_t n = d->n_unknown;
        for (size_t i = 0; i < d->ckpt->n_claims; i++)
                n += recovered(&d->ckpt->claims[i]);
        return n;
}

static void complete_from_file(agent_dra *d, const char *path) {
        _cleanup_(dp_object_list_freep) dp_object_list *l = dp_object_list_new();
        dp_error e = DP_ERROR_INIT;
        if (!l || dp_model_load_file(path, l, &e) < 0) return;
        for (size_t i = 0; i < l->n; i++) {
                if (l->items[i].hdr->kind != DP_KIND_RESOURCE_CLAIM) continue;
                const dp_resource_claim *claim = l->items[i].claim;
                const char *uid = claim->meta.uid;
                const dp_dra_prepared_claim *c = uid ? dp_dra_checkpoint_find(d->ckpt, uid) : NULL;
                if (!(c && recovered(c)) && unknown_find(d, uid) < 0) continue;
                size_t n = 0;
                dp_resource_slice *const *v = dp_dra_publisher_slices(d->pub, &n);
                dp_dra_prepare_input in = {.inv = d->inv, .slices = v, .n_slices = n};
                dp_dra_node_dirs dirs = {.cdi_dir = d->cdi_dir, .state_dir = d->state_dir};
                dp_dra_prepared_claim out = {0};
                e = (dp_error)DP_ERROR_INIT;
                if (reprepare(d, uid, &in, claim, &dirs, &out, &e) < 0)
                        log_warning("claim %s from %s: %s; it stays as rebuilt", uid, path, dp_error_msg(&e));
                else
                        log_info("claim %s/%s (%s) completed from %s", claim->meta.namespace, claim->meta.name, uid,
                                 path);
                dp_dra_prepared_claim_done(&out);
        }
}

static void complete_recovered(agent_dra *d) {
        if (!d->claims_dir || !incomplete(d)) return;
        DIR *top = opendir(d->claims_dir);
        for (struct dirent *ns; top && incomplete(d) && (ns = readdir(top));) {
                if (ns->d_name[0] == '.') continue;
                _cleanup_free_ char *sub = dp_asprintf("%s/%s", d->claims_dir, ns->d_name);
                DIR *dir = sub ? opendir(sub) : NULL;
                for (struct dirent *f; dir && incomplete(d) && (f = readdir(dir));) {
                        const char *dot = strrchr(f->d_name, '.');
                        struct stat st;
                        if (f->d_name[0] == '.' || !dot ||
                            (!streq(dot, ".yaml") && !streq(dot, ".yml") && !streq(dot, ".json")))
                                continue;
                        if (fstatat(dirfd(dir), f->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
                            st.st_size > (off_t)CLAIM_FILE_MAX)
                                continue;
                        _cleanup_free_ char *path = dp_asprintf("%s/%s", sub, f->d_name);
                        if (path) complete_from_file(d, path);
                }
                if (dir) closedir(dir);
        }
        if (top) closedir(top);
}

int agent_dra_new(dp_loop *l, const agent_dra_options *o, dp_ledger *ledger, dp_dra_inventory *inv, agent_dra **ret,
                  dp_error *err) {
        _cleanup_(dp_dra_inventory_freep) dp_dra_inventory *owned = inv;
        assert_return(l && o && o->node_name && inv && ret, -EINVAL);
        _cleanup_(agent_dra_freep) agent_dra *d = calloc(1, sizeof *d);
        if (!d) return -ENOMEM;
        d->lock = -1;
        d->check_usec = o->check_usec ? o->check_usec : AGENT_DRA_CHECK_USEC_DEFAULT;
        d->loop = l;
        d->ledger = ledger;
        d->inv = TAKE_PTR(owned);
        const char *plugins = o->plugins_dir ? o->plugins_dir : AGENT_DRA_DEFAULT_PLUGINS_DIR;
        d->node_name = strdup(o->node_name);
        d->driver = strdup(d->inv->driver);
        d->registry_dir = strdup(o->registry_dir ? o->registry_dir : AGENT_DRA_DEFAULT_REGISTRY_DIR);
        d->reg_sock_name = dp_asprintf("%s-reg.sock", d->inv->driver);
        d->reg_sock_path = dp_asprintf("%s/%s-reg.sock", d->registry_dir ? d->registry_dir : "", d->inv->driver);
        d->state_dir = dp_asprintf("%s/%s", plugins, d->inv->driver);
        d->dra_sock_path = dp_asprintf("%s/%s/%s", plugins, d->inv->driver, AGENT_DRA_SOCKET_NAME);
        d->cdi_dir = strdup(o->cdi_dir ? o->cdi_dir : AGENT_DRA_DEFAULT_CDI_DIR);
        d->slices_dir = o->slices_dir ? strdup(o->slices_dir) : NULL;
        d->claims_dir = o->claims_dir ? strdup(o->claims_dir) : NULL;
        d->pub = dp_dra_publisher_new(previous_generation(o->slices_dir, o->node_name, d->inv->driver) + 1);
        d->kube = o->kube;
        d->metrics = o->metrics;
        d->holds_changed = o->holds_changed;
        d->userdata = o->userdata;
        if (d->kube) {
                int q = dp_kube_slices_new(d->kube, o->node_name, d->inv->driver, &d->kslices);
                if (q < 0) return q;
                if (o->api_backoff_max_usec)
                        dp_kube_slices_set_backoff(d->kslices, DP_MIN(250000, o->api_backoff_max_usec),
                                                   o->api_backoff_max_usec);
        }
        if (!d->node_name || !d->driver || !d->registry_dir || !d->reg_sock_name || !d->reg_sock_path ||
            !d->state_dir || !d->dra_sock_path || !d->cdi_dir || (o->slices_dir && !d->slices_dir) ||
            (o->claims_dir && !d->claims_dir) || !d->pub)
                return -ENOMEM;
        int r;
        d->rules = calloc(o->n_taint_effects + 1, sizeof *d->rules);
        if (!d->rules) return -ENOMEM;
        for (size_t i = 0; i < o->n_taint_effects; i++) {
                const char *eq = strchr(o->taint_effects[i], '=');
                dp_dra_taint_effect eff;
                if (!eq || eq == o->taint_effects[i] || dp_dra_taint_effect_from_string(eq + 1, &eff) < 0)
                        return dp_error_set(err, -EINVAL,
                                            "taint effect \"%s\": expected CLASS=EFFECT with EFFECT NoSchedule, "
                                            "NoExecute, None or off",
                                            o->taint_effects[i]);
                if (eq - o->taint_effects[i] == 1 && o->taint_effects[i][0] == '*') {
                        d->default_effect = eff;
                        continue;
                }
                char *cls = strndup(o->taint_effects[i], (size_t)(eq - o->taint_effects[i]));
                if (!cls) return -ENOMEM;
                d->rules[d->n_rules++] = (dp_dra_taint_rule){cls, eff};
        }
        /* The slices directory is made by write_slices: one that cannot be
         * made yet (disk full, read-only) is retried like a failed write. */
        const char *dirs[] = {d->registry_dir, d->state_dir, d->cdi_dir};
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
                if (dirs[i] && (r = dp_mkdir_p(dirs[i], 0750)) < 0) return dp_error_errno(err, r, "create %s", dirs[i]);
        /* One driver per driver directory: its checkpoint and dra.sock. */
        if ((r = agent_dir_lock(d->state_dir, AGENT_DRIVER_LOCK_NAME, "DRA driver directory", &d->lock, err)) < 0)
                return r;
        if ((r = agent_socket_check_free(d->reg_sock_path, err)) < 0) return r;
        bool rebuild = false;
        if ((r = load_checkpoint(d, &rebuild, err)) < 0) return r;
        if ((r = recover_state(d, rebuild, err)) < 0) return r;
        replay_checkpoint(d);
        if ((r = publish(d, true)) < 0) return dp_error_errno(err, r, "publish ResourceSlices");
        if (rebuild) complete_recovered(d);
        check_cdi(d);
        if ((r = dp_loop_add_timer(l, dp_loop_now() + d->check_usec, on_check, d, &d->check)) < 0)
                return dp_error_errno(err, r, "file check timer");
        if ((r = serve_dra(d)) < 0) return dp_error_errno(err, r, "serve %s", d->dra_sock_path);
        if ((r = serve_registration(d)) < 0) return dp_error_errno(err, r, "serve %s", d->reg_sock_path);
        if ((r = dp_loop_add_inotify(l, d->registry_dir, IN_DELETE | IN_MOVED_FROM, on_reg_dir_event, d,
                                     &d->reg_watch)) < 0 ||
            (r = dp_loop_add_inotify(l, d->state_dir, IN_DELETE | IN_MOVED_FROM, on_state_dir_event, d,
                                     &d->state_watch)) < 0)
                return dp_error_errno(err, r, "watch %s and %s", d->registry_dir, d->state_dir);
        log_info("DRA driver %s: %zu device(s), service %s, registration %s", d->driver, d->inv->n_devices,
                 d->dra_sock_path, d->reg_sock_path);
        *ret = TAKE_PTR(d);
        return 0;
}

void agent_dra_set_ledger(agent_dra *d, dp_ledger *ledger) {
        if (!d) return;
        d->ledger = ledger;
        replay_checkpoint(d);
}

int agent_dra_update(agent_dra *d, dp_dra_inventory *inv) {
        if (!d) {
                dp_dra_inventory_free(inv);
                return 0;
        }
        dp_dra_inventory_free(d->inv);
        d->inv = inv;
        int r = publish(d, false);
        send_health(d, NULL);
        return r;
}

agent_dra *agent_dra_free(agent_dra *d) {
        if (!d) return NULL;
        while (d->pending) {
                dp_grpc_call *call = d->pending->call;
                pending_free(d->pending);
                dp_grpc_call_finish(call, DP_GRPC_UNAVAILABLE, "stopping");
        }
        dp_kube_offload_free(d->offload);
        dp_kube_slices_free(d->kslices);
        dp_grpc_streams_finish(&d->streams, DP_GRPC_UNAVAILABLE, "stopping");
        dp_grpc_streams_done(&d->streams);
        dp_loop_source_free(d->reg_watch);
        dp_loop_source_free(d->state_watch);
        dp_loop_source_free(d->check);
        dp_grpc_server_free(d->srv);
        dp_grpc_server_free(d->reg_srv);
        dp_dra_checkpoint_free(d->ckpt);
        for (size_t i = 0; i < d->n_unknown; i++)
                dp_free_many(d->unknown[i], d->unknown_why[i]);
        dp_free_many(d->unknown, d->unknown_why);
        dp_dra_publisher_free(d->pub);
        dp_dra_inventory_free(d->inv);
        dp_free_many(d->node_name, d->driver, d->registry_dir, d->reg_sock_name, d->reg_sock_path, d->state_dir,
                     d->dra_sock_path, d->cdi_dir, d->slices_dir, d->claims_dir);
        for (size_t i = 0; i < d->n_rules; i++)
                free((char *)d->rules[i].fault_class);
        free(d->rules);
        for (size_t f = 0; f < DRA_FILE_MAX; f++)
                free(d->files[f].why);
        if (d->lock >= 0) close(d->lock); /* the lock goes last */
        free(d);
        return NULL;
}

int64_t agent_dra_generation(const agent_dra *d) { return d ? dp_dra_publisher_generation(d->pub) : 0; }
uint64_t agent_dra_registrations(const agent_dra *d) { return d ? d->registrations : 0; }
const char *agent_dra_driver(const agent_dra *d) { return d ? d->driver : NULL; }
size_t agent_dra_prepared_claims(const agent_dra *d) { return d && d->ckpt ? d->ckpt->n_claims : 0; }
const dp_kube_slices *agent_dra_api_slices(const agent_dra *d) { return d ? d->kslices : NULL; }

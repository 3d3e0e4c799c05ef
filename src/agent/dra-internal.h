/* SPDX-License-Identifier: Apache-2.0
 *
 * dra-internal.h — the agent's DRA driver (V2 path), behind a model-free
 * interface: agent.c holds the device model (devices/device.h) and builds
 * the inventory; dra.c includes the Kubernetes model (model/model.h) to read
 * claims and emit slices. The two headers define the same names, so they
 * never meet in one file (docs/dra-driver.md).
 *
 * What dra.c serves, all on the agent's loop:
 *   - <plugins-dir>/<driver>/dra.sock: DRA kubelet plugin API v1 and v1beta1
 *     (NodePrepareResources / NodeUnprepareResources) and the device health
 *     stream (v1alpha1 and v1 DRAResourceHealth/NodeWatchResources);
 *   - <registry-dir>/<driver>-reg.sock: pluginregistration GetInfo /
 *     NotifyRegistrationStatus (type DRAPlugin, supported versions
 *     "v1.DRAPlugin", "v1beta1.DRAPlugin", "v1alpha1.DRAResourceHealth");
 *     either socket removed by someone else is re-created at once (inotify),
 *     so a kubelet that restarts and walks the registry finds it again;
 *   - ResourceSlices in --slices-dir (<node>-<driver>.yaml, written atomically
 *     whenever the publisher's generation moves) and, with an API client,
 *     as resource.k8s.io/v1 objects (kube/slices.c);
 *   - with an API client, NodePrepareResources answers asynchronously: a
 *     claim not in the checkpoint is read from the API (kube/claims.c,
 *     retried until shortly before the kubelet's deadline) while the loop
 *     goes on serving; claims in the checkpoint never wait for the API;
 *   - prepared claims in the driver checkpoint <plugins-dir>/<driver>/checkpoint.json,
 *     replayed into the shared ledger at start.
 */
#pragma once

#include <protobuf-c/protobuf-c.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "dra/inventory.h"
#include "dra/ledger.h"
#include "grpc/loop.h"
#include "kube/kube.h"

struct agent_metrics;

#define AGENT_DRA_DEFAULT_REGISTRY_DIR "/var/lib/kubelet/plugins_registry"
#define AGENT_DRA_DEFAULT_PLUGINS_DIR "/var/lib/kubelet/plugins"
#define AGENT_DRA_DEFAULT_CDI_DIR "/var/run/cdi"
#define AGENT_DRA_SOCKET_NAME "dra.sock"
#define AGENT_DRA_CHECK_USEC_DEFAULT (10ull * 1000 * 1000)

typedef struct agent_dra_options {
        const char *node_name;    /* required */
        const char *registry_dir; /* NULL: AGENT_DRA_DEFAULT_REGISTRY_DIR */
        const char *plugins_dir;  /* NULL: AGENT_DRA_DEFAULT_PLUGINS_DIR */
        const char *cdi_dir;      /* NULL: AGENT_DRA_DEFAULT_CDI_DIR */
        const char *slices_dir;   /* NULL: slices are not written */
        const char *claims_dir;   /* NULL: every prepare fails "no claims directory" */
        /* Taint effect per fault class: "CLASS=EFFECT" (EFFECT NoSchedule,
         * NoExecute, None or off; CLASS "*" sets the default, NoSchedule). */
        const char *const *taint_effects;
        size_t n_taint_effects;
        /* The API server (borrowed; NULL: none). With it, slices are
         * published as ResourceSlice objects and NodePrepareResources reads
         * each claim from the API (claims_dir is then not used). */
        dp_kube_client *kube;
        uint64_t api_backoff_max_usec; /* 0: 30 s */
        /* Period of the file check: failed writes of the slices file and of
         * the checkpoint retried, CDI specs compared with the checkpoint's
         * copies and written again. 0: AGENT_DRA_CHECK_USEC_DEFAULT. */
        uint64_t check_usec;
        struct agent_metrics *metrics; /* borrowed; NULL: not counted */
        /* Called on the loop after the ledger's V2 holds or unknown-state
         * marks changed (a claim prepared, unprepared or recovered). NULL: none. */
        void (*holds_changed)(void *userdata);
        void *userdata;
} agent_dra_options;

typedef struct agent_dra agent_dra;

/* Takes ownership of inv (also on failure). -EINVAL (err) for a bad
 * taint effect. ledger is shared with the V1
 * path and outlives the driver. -errno with err set. */
int agent_dra_new(dp_loop *l, const agent_dra_options *o, dp_ledger *ledger, dp_dra_inventory *inv, agent_dra **ret,
                  dp_error *err);
agent_dra *agent_dra_free(agent_dra *d);
/* The driver's file metrics (write failures per file, CDI specs written
 * again) in the Prometheus text format; nothing when d is NULL. */
void agent_dra_metrics_write(const agent_dra *d, dp_strbuf *out);
DEFINE_FREEP(agent_dra, agent_dra_free)
/* A new inventory (health changed): slices republished when they differ,
 * health streams told. Takes ownership of inv. */
int agent_dra_update(agent_dra *d, dp_dra_inventory *inv);
/* The reply to NodePrepareResources (prepare) or NodeUnprepareResources for
 * a decoded request (the v1 message types; v1beta1 is the same on the wire,
 * and v1 = false leaves share_id out). Packed into *ret (free()). -E2BIG
 * over DP_DRA_CHECKPOINT_MAX_CLAIMS claims, -ENOMEM. Per-claim failures
 * are in the reply. */
int agent_dra_reply(agent_dra *d, bool prepare, bool v1, const ProtobufCMessage *req, uint8_t **ret, size_t *ret_len);
/* The devices were discovered again (SIGHUP): use this ledger (borrowed)
 * and replay the checkpoint's holds into it. */
void agent_dra_set_ledger(agent_dra *d, dp_ledger *ledger);
/* Counters for tests and benchmarks. */
int64_t agent_dra_generation(const agent_dra *d);
uint64_t agent_dra_registrations(const agent_dra *d);
const char *agent_dra_driver(const agent_dra *d);
size_t agent_dra_prepared_claims(const agent_dra *d);
/* The API publication (NULL without an API client). */
const dp_kube_slices *agent_dra_api_slices(const agent_dra *d);

/* SPDX-License-Identifier: Apache-2.0
 *
 * pods.h — pods as the node stand-in reads them from its manifest directory
 * (like the kubelet's static pods): only what the device manager needs.
 *
 * A manifest file holds one or more `v1 Pod` documents (or a `v1 List` of
 * them). Per container, extended resources (dp_devmgr_is_extended_resource_name) are
 * read from resources.limits; they must be whole non-negative integers, and a
 * request, if given, must equal the limit (Kubernetes' rule for resources
 * that cannot be overcommitted). Other resources (cpu, memory, ...) are
 * accepted and ignored. Init containers are not run by the stand-in; an init
 * container asking for an extended resource is refused rather than ignored.
 *
 * The pod UID is metadata.uid when given, otherwise derived from the
 * document's content (as the kubelet derives static pod UIDs), so the same
 * manifest keeps its UID across restarts and an edited one gets a new one.
 */
#pragma once

#include "doc/doc.h"

#define DP_NODE_MAX_CONTAINERS 64
#define DP_NODE_MAX_EXTENDED_PER_CONTAINER 32
/* Largest count one container may ask for one resource. */
#define DP_NODE_MAX_REQUEST 100000

typedef struct dp_node_request {
        char *resource;
        uint64_t count;
} dp_node_request;

typedef struct dp_node_container {
        char *name;
        dp_node_request *req;
        size_t n_req;
} dp_node_container;

typedef struct dp_node_pod {
        char *uid;
        char *ns;
        char *name;
        char *source; /* manifest file path */
        dp_node_container *containers;
        size_t n_containers;
        /* spec.resourceClaims or status.extendedResourceClaimStatus: the
         * containers start only once the DRA manager prepared the claims
         * (extended resources mapped there are not device-plugin requests). */
        bool has_claims;
} dp_node_pod;

dp_node_pod *dp_node_pod_free(dp_node_pod *p);
DEFINE_FREEP(dp_node_pod, dp_node_pod_free)

/* Decode one Pod document. Errors: -EINVAL with
 * "<source>: Pod <ns>/<name>: <field path>: <rule>". */
int dp_node_pod_decode(const dp_doc_node *root, const char *source, dp_node_pod **ret, dp_error *err);
/* Read every Pod of a manifest file. *ret_pods is an array of *ret_n pods. */
int dp_node_pods_load_file(const char *path, dp_node_pod ***ret_pods, size_t *ret_n, dp_error *err);
void dp_node_pods_free(dp_node_pod **pods, size_t n);

/* Files of a manifest directory that hold pods: *.yaml, *.yml, *.json, not
 * starting with '.' (editors' and writers' temporary files). */
bool dp_node_is_manifest_name(const char *name);
/* Check every manifest of dir as `devplane node` would read it: one line per
 * pod ("ok ...") or per bad file ("error <file>: <object>: <field>: <rule>")
 * into out; *ret_bad counts bad files and duplicate pods. -errno (with err)
 * if dir cannot be read. */
int dp_node_manifests_check(const char *dir, dp_strbuf *out, size_t *ret_bad, dp_error *err);

/* Backoff before attempt `attempt` (1 = first retry): initial × 2^(attempt-1),
 * capped at max. */
uint64_t dp_node_backoff_ms(uint64_t initial_ms, uint64_t max_ms, unsigned attempt);

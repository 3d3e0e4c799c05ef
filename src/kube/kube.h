/* SPDX-License-Identifier: Apache-2.0
 *
 * kube.h — a small Kubernetes API client for the node agent: credentials
 * (kubeconfig or in-cluster), HTTPS requests through libcurl (loaded with
 * dlopen only when a client is made, kube/curl-api.h) driven by the
 * daemon's dp_loop, ResourceSlice publication and ResourceClaim reads
 * (docs/deploy.md, "Kubernetes API").
 *
 * Why the curl multi interface on the loop, not a thread: the agent is one
 * epoll loop (DESIGN.md, "no threads without a measured reason"). curl's
 * multi interface hands us its sockets (CURLMOPT_SOCKETFUNCTION) and one
 * timeout (CURLMOPT_TIMERFUNCTION); each becomes a dp_loop io or timer
 * source, and curl_multi_socket_action() runs from their callbacks. Name
 * resolution uses curl's threaded resolver where curl was built with it
 * (Debian's is), so no call here blocks the loop: an API server that does
 * not answer costs a pending request, never a stalled V1 or DRA socket.
 * Nor does one that answers too much (issue 21): watch lines are capped
 * and handed out a bounded number per loop turn, and the publisher decodes
 * lines over 64 KiB on one worker thread (kube/offload.h, the measured
 * reason: 200-400 ms of parsing for a legal 3.5 MiB event).
 *
 * Every completion callback runs from the loop, never from inside the
 * function that started the request.
 */
#pragma once

#include "base/error.h"
#include "grpc/loop.h"

/* The in-cluster service-account directory (token, ca.crt, namespace). */
#define DP_KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
/* Caps on what the API server may send us (a list of one node's slices is
 * far below it; a claim is at most a few hundred KiB). */
#define DP_KUBE_MAX_RESPONSE (16u << 20)
/* A line of a watch stream: one event, an object in a small envelope.
 * kube-apiserver refuses request bodies over 3 MiB (and etcd's default
 * --max-request-bytes is 1.5 MiB), so no object it serves is larger; a
 * longer line is a broken or hostile server, and the stream is dropped. */
#define DP_KUBE_MAX_LINE (4u << 20)
#define DP_KUBE_MAX_LINE_TEXT "4 MiB"
/* kubeconfig files and inline certificates. */
#define DP_KUBE_MAX_CONFIG (1u << 20)

/* ---- credentials (kube/kubeconfig.c) ------------------------------------ */

typedef struct dp_kube_config {
        char *server;  /* "https://host:port" without a trailing slash */
        char *ca_file; /* PEM file, or NULL */
        char *ca_data; /* PEM bytes (decoded *-data), or NULL */
        size_t ca_len;
        char *token;                 /* bearer token, or NULL */
        char *token_file;            /* re-read before each request (rotated tokens), or NULL */
        char *cert_file, *cert_data; /* client certificate (PEM) */
        size_t cert_len;
        char *key_file, *key_data; /* client key (PEM) */
        size_t key_len;
        bool insecure; /* insecure-skip-tls-verify */
        char *source;  /* the file (or "in-cluster") for messages */
        char *namespace; /* the context's namespace (kubeconfig) or the service account's; NULL: none */
        struct dp_kube_exec *exec; /* an exec credential plugin (kube/exec-cred.c), or NULL */
} dp_kube_config;

dp_kube_config *dp_kube_config_free(dp_kube_config *c);
DEFINE_FREEP(dp_kube_config, dp_kube_config_free)

/* Parse a kubeconfig (YAML or JSON) held in buf. `name` is the file name
 * used in messages and to resolve relative paths (its directory, as kubectl
 * does); `context` overrides current-context (NULL: use it). -EINVAL with
 * err naming the file and field ("kc.yaml: users[name=u].user.exec: not
 * supported ..."), -E2BIG past DP_KUBE_MAX_CONFIG, -ENOMEM. Touches no
 * files (certificate paths are only recorded). */
int dp_kube_config_parse(const char *buf, size_t len, const char *name, const char *context, dp_kube_config **ret,
                         dp_error *err);
/* Read path and parse it. -ENOENT/-EACCES... naming the file. */
int dp_kube_config_load(const char *path, const char *context, dp_kube_config **ret, dp_error *err);
/* The same, with user.exec (a credential plugin) accepted and recorded in
 * ->exec, for callers that get their credentials through
 * dp_kube_config_credential() (live mode: simulate, explain). The others
 * refuse exec, since their client sends only a token or certificate. */
#define DP_KUBE_CONFIG_EXEC 1u
int dp_kube_config_parse_flags(const char *buf, size_t len, const char *name, const char *context, unsigned flags,
                               dp_kube_config **ret, dp_error *err);
int dp_kube_config_load_flags(const char *path, const char *context, unsigned flags, dp_kube_config **ret,
                              dp_error *err);
/* In-cluster: KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT, sa_dir/token
 * and sa_dir/ca.crt (sa_dir NULL: DP_KUBE_SA_DIR). -ENOENT when not in a
 * cluster (env unset or token missing), naming what is missing. */
int dp_kube_config_in_cluster(const char *sa_dir, dp_kube_config **ret, dp_error *err);
/* RFC 4648 base64 (padding optional, no whitespace but line breaks).
 * -EINVAL on a bad character. *ret is NUL-terminated. */
int dp_kube_base64_decode(const char *s, size_t len, char **ret, size_t *ret_len);

/* ---- exec credential plugins (kube/exec-cred.c) ---------------------------- */

/* users[].user.exec as kubectl reads it (client.authentication.k8s.io). */
typedef enum { DP_KUBE_EXEC_IF_AVAILABLE = 0, DP_KUBE_EXEC_NEVER, DP_KUBE_EXEC_ALWAYS } dp_kube_exec_interactive;
/* What the plugin's standard output may hold, and its standard error kept
 * for the message when it fails. */
#define DP_KUBE_EXEC_MAX_OUTPUT (1u << 20)
#define DP_KUBE_EXEC_MAX_STDERR 4096u

typedef struct dp_kube_credential {
        char *token;                 /* status.token, or NULL */
        char *cert_data, *key_data;  /* status.clientCertificateData/clientKeyData (PEM), or NULL */
        size_t cert_len, key_len;
        int64_t expires;             /* status.expirationTimestamp, Unix seconds; 0: none given */
} dp_kube_credential;

typedef struct dp_kube_exec {
        char *api_version; /* client.authentication.k8s.io/v1 or /v1beta1 */
        char *command;     /* as written, or made absolute against the kubeconfig's directory when it has a '/' */
        char **args;       /* NULL-terminated, args[0] the command */
        char **env;        /* NULL-terminated "NAME=value" from exec.env */
        char *install_hint;
        bool provide_cluster_info;
        dp_kube_exec_interactive interactive;
        char *where; /* "kc.yaml: users[name=u].user.exec", for messages */
        /* the last credential (cache), and how many times the plugin ran */
        dp_kube_credential cred;
        bool have_cred;
        unsigned runs;
} dp_kube_exec;

dp_kube_exec *dp_kube_exec_free(dp_kube_exec *x);
DEFINE_FREEP(dp_kube_exec, dp_kube_exec_free)
void dp_kube_credential_done(dp_kube_credential *c);
/* Decode the plugin's standard output (pure: the fuzzer's entry): kind
 * ExecCredential, the apiVersion the kubeconfig asked for, status.token or
 * a certificate and key, expirationTimestamp (RFC 3339). -EINVAL with err
 * saying what is wrong ("what" starts it), -E2BIG past
 * DP_KUBE_EXEC_MAX_OUTPUT, -ENOMEM. */
int dp_kube_exec_decode(const char *buf, size_t len, const char *api_version, const char *what,
                        dp_kube_credential *ret, dp_error *err);
/* The credential to send now: cfg->exec's cached one while it has not
 * expired (now_unix: the wall clock) and `refresh` is false, else the
 * plugin runs (as kubectl runs it: the environment plus exec.env,
 * KUBERNETES_EXEC_INFO with spec.interactive false and, with
 * provideClusterInfo, spec.cluster; standard input /dev/null; never
 * interactive, so interactiveMode Always is refused) and is killed past
 * timeout_ms. *ret is borrowed from cfg. -ENOENT (no such command, with the
 * installHint), -EIO (it failed: its exit status and standard error,
 * escaped), -ETIMEDOUT, -EINVAL (its output), -EPERM (Always). */
int dp_kube_config_credential(const dp_kube_config *cfg, bool refresh, int64_t now_unix, unsigned timeout_ms,
                              const dp_kube_credential **ret, dp_error *err);
/* RFC 3339 date-time ("2026-12-06T05:00:00Z", fractions and offsets) to
 * Unix seconds. -EINVAL. */
int dp_kube_parse_time(const char *s, int64_t *ret);

/* ---- libcurl, loaded at run time (kube/curl-load.c) ---------------------- */

/* dlopen("libcurl.so.4") ($DP_CURL_LIBRARY replaces the name) and resolve
 * the functions the client calls; once per process, later calls return 0.
 * `what` names the user in the message (NULL: "the Kubernetes API
 * client"): -ENOENT "--kubeconfig needs libcurl.so.4: <dlerror> ..." when
 * the library or a symbol is missing, -EIO when curl_global_init fails.
 * dp_kube_client_new() calls it; a front end calls it first for the clear
 * message. */
int dp_kube_curl_load(const char *what, dp_error *err);

/* ---- requests (kube/client.c) -------------------------------------------- */

typedef struct dp_kube_client dp_kube_client;
typedef struct dp_kube_request dp_kube_request;

/* status: the HTTP status, or 0 when no answer came (connection refused,
 * TLS failure, timeout); body: the response (NUL-terminated, borrowed for
 * the call); errmsg: curl's message when status is 0, else NULL. The
 * request is freed right after the callback returns. */
typedef void (*dp_kube_done_fn)(long status, const char *body, size_t len, const char *errmsg, void *userdata);

/* Copies what it needs from cfg. -ENOMEM, -EIO (curl init), -ENOENT (no
 * libcurl: dp_kube_curl_load()). */
int dp_kube_client_new(dp_loop *l, const dp_kube_config *cfg, dp_kube_client **ret);
/* Cancels every request without calling back. */
dp_kube_client *dp_kube_client_free(dp_kube_client *c);
DEFINE_FREEP(dp_kube_client, dp_kube_client_free)
dp_loop *dp_kube_client_loop(const dp_kube_client *c);

/* Start METHOD path (path starts with '/', query included) with an optional
 * JSON body. timeout_ms bounds the whole exchange (0: 30 s). *ret (may be
 * NULL) lets the caller cancel it. */
int dp_kube_request_start(dp_kube_client *c, const char *method, const char *path, const char *body, size_t len,
                          unsigned timeout_ms, dp_kube_done_fn done, void *userdata, dp_kube_request **ret);
/* A streaming GET (watch): line is called for every complete line of the
 * body, from the loop (never inside curl), a bounded number per loop turn
 * (the transfer pauses while lines wait, so other sources keep their
 * turns); done once after the last line, with the status and an empty body
 * when the answer was 200, else the error body. A line longer than
 * DP_KUBE_MAX_LINE ends the stream: done gets status 0 and a message
 * saying so. line may cancel its own request (no further calls, no done).
 * timeout_ms 0: none. */
typedef void (*dp_kube_line_fn)(const char *line, size_t len, void *userdata);
int dp_kube_stream_start(dp_kube_client *c, const char *path, unsigned timeout_ms, dp_kube_line_fn line,
                         dp_kube_done_fn done, void *userdata, dp_kube_request **ret);
/* Drop a pending request: its callback is not called. */
void dp_kube_request_cancel(dp_kube_request *r);
/* A stream's line callback whose work goes on elsewhere (kube/offload.h)
 * holds its request: no more lines and no done until it lets go (the
 * transfer pauses meanwhile), so events stay in order. */
void dp_kube_request_hold(dp_kube_request *r, bool hold);

/* Counters (metrics): requests finished, and those that failed (no answer,
 * or a status >= 400 other than the 404/409 the callers expect). */
uint64_t dp_kube_client_requests(const dp_kube_client *c);
uint64_t dp_kube_client_errors(const dp_kube_client *c);
void dp_kube_client_count_error(dp_kube_client *c);

/* Percent-encode for a query value. NULL on OOM. */
char *dp_kube_query_escape(const char *s);
/* The "message" of a Kubernetes Status body, else the first 200 bytes. */
void dp_kube_status_message(const char *body, size_t len, char *buf, size_t size);

/* Exponential backoff: first, doubling, capped; with no jitter, so tests
 * and logs are predictable (one agent per node does not stampede). */
typedef struct dp_kube_backoff {
        uint64_t first_usec, max_usec, next_usec;
} dp_kube_backoff;
#define DP_KUBE_BACKOFF_INIT                                                                                           \
        { 250000, 30000000, 0 }
uint64_t dp_kube_backoff_next(dp_kube_backoff *b);
static inline void dp_kube_backoff_reset(dp_kube_backoff *b) { b->next_usec = 0; }

/* ---- a claim (kube/claims.c) ---------------------------------------------- */

/* GET /apis/resource.k8s.io/v1/namespaces/NS/resourceclaims/NAME, retried
 * with backoff on no answer, 429 and 5xx until deadline_usec (absolute
 * dp_loop_now() time). done gets the last status and body (a 404 at once).
 * Cancel: its callback is not called. */
typedef struct dp_kube_claim_fetch dp_kube_claim_fetch;
int dp_kube_claim_fetch_start(dp_kube_client *c, const char *ns, const char *name, uint64_t deadline_usec,
                              dp_kube_done_fn done, void *userdata, dp_kube_claim_fetch **ret);
dp_kube_claim_fetch *dp_kube_claim_fetch_cancel(dp_kube_claim_fetch *f);
DEFINE_FREEP(dp_kube_claim_fetch, dp_kube_claim_fetch_cancel)

/* ---- a snapshot of the cluster (kube/list.c) ------------------------------ */

/* Page size asked of the API server, and a cap on pages per resource. */
#define DP_KUBE_LIST_LIMIT 500
#define DP_KUBE_LIST_MAX_PAGES 1000
/* Bounds on one snapshot, all lists together (kubectl has none: it holds
 * what the server sends): the bytes of the pages kept, and the time. */
#define DP_KUBE_SNAPSHOT_MAX_BYTES (1ull << 30)
#define DP_KUBE_SNAPSHOT_DEADLINE_MS 60000u

typedef struct dp_kube_snapshot_page {
        char *body; /* a *List as the API server sent it (JSON) */
        size_t len;
        char *source; /* "API server: nodes (page 1)", for messages */
} dp_kube_snapshot_page;

typedef struct dp_kube_snapshot {
        dp_kube_snapshot_page *pages;
        size_t n;
        size_t bytes;       /* of the pages, together */
        const char *dra;    /* the resource.k8s.io version read: "v1", "v1beta2", "v1beta1"; NULL: none */
        char *dra_note;     /* why not, or what was converted; NULL when v1 was read */
        unsigned exec_runs; /* how many times an exec credential plugin ran */
} dp_kube_snapshot;

dp_kube_snapshot *dp_kube_snapshot_free(dp_kube_snapshot *s);
DEFINE_FREEP(dp_kube_snapshot, dp_kube_snapshot_free)

typedef struct dp_kube_snapshot_limits {
        unsigned request_timeout_ms; /* each GET; 0: 30 s */
        unsigned deadline_ms;        /* all of it; 0: DP_KUBE_SNAPSHOT_DEADLINE_MS */
        uint64_t max_bytes;          /* pages kept; 0: DP_KUBE_SNAPSHOT_MAX_BYTES */
} dp_kube_snapshot_limits;

/* List nodes, pods (not finished ones), resourceslices, resourceclaims,
 * resourceclaimtemplates, deviceclasses and devicetaintrules, every page
 * (limit DP_KUBE_LIST_LIMIT, metadata.continue), with GET requests only, on
 * a loop of its own: the call returns when everything is read.
 * resource.k8s.io comes at the version the server serves, from its
 * discovery document (GET /apis/resource.k8s.io): v1, else v1beta2, else
 * v1beta1 (the model converts them as it does files); not served at all (or
 * only at an older alpha): left out, and ->dra_note says so. A
 * devicetaintrules list answered 404 is left out. Credentials: cfg's, or
 * its exec plugin's (dp_kube_config_credential; a 401 runs it again once).
 * Errors, each naming what to do: -EACCES (401: the credentials; 403: the
 * RBAC rule missing), -ESTALE (410: the list expired between pages),
 * -EHOSTUNREACH (no answer), -ETIMEDOUT (past the deadline), -E2BIG (past
 * max_bytes or DP_KUBE_LIST_MAX_PAGES), -EPROTO (another status, or not a
 * list), -ENOENT (no libcurl), the plugin's errors. lim may be NULL. */
int dp_kube_snapshot_take(const dp_kube_config *cfg, const dp_kube_snapshot_limits *lim, dp_kube_snapshot **ret,
                          dp_error *err);

/* ---- ResourceSlices (kube/slices.c) --------------------------------------- */

typedef struct dp_kube_slices dp_kube_slices;

/* Keeps the API server's ResourceSlices of (node, driver) equal to the
 * desired set: GET the Node (its uid for ownerReferences), LIST the slices
 * with fieldSelector spec.nodeName=NODE,spec.driver=DRIVER, then POST the
 * missing, PUT the changed (with resourceVersion; 409 re-lists and
 * retries), DELETE those no longer desired. Every change publishes the whole
 * pool at a new generation, above any the server holds. Failures retry with
 * dp_kube_backoff; nothing here blocks the loop. Once in sync it watches
 * the same selection (from the list's resourceVersion): a slice someone
 * else deleted or changed is written again. */
int dp_kube_slices_new(dp_kube_client *c, const char *node, const char *driver, dp_kube_slices **ret);
dp_kube_slices *dp_kube_slices_free(dp_kube_slices *s);
DEFINE_FREEP(dp_kube_slices, dp_kube_slices_free)
/* The desired slices: JSON objects (apiVersion, kind, metadata.name, spec
 * with pool and driver), copied. Their spec.pool.generation is replaced.
 * Starts a sync when anything differs from the last set. -EINVAL (a text is
 * not such an object), -ENOMEM. */
int dp_kube_slices_set(dp_kube_slices *s, const char *const *json, size_t n);
/* Backoff bounds (tests shorten them). */
void dp_kube_slices_set_backoff(dp_kube_slices *s, uint64_t first_usec, uint64_t max_usec);
/* State for metrics and tests. */
bool dp_kube_slices_synced(const dp_kube_slices *s);
int64_t dp_kube_slices_generation(const dp_kube_slices *s);
uint64_t dp_kube_slices_writes(const dp_kube_slices *s);
bool dp_kube_slices_watching(const dp_kube_slices *s);
/* For the fuzzer (fuzz/fuzz-kube-answers.c): handle body as the API
 * server's answer to what (0: GET node, 1: LIST, 2: an update of the first
 * desired slice, 3: one watch line) with that status, as if it had come
 * from the network; a request the publisher was waiting for is dropped. */
void dp_kube_slices_inject(dp_kube_slices *s, int what, long status, const char *body, size_t len);

/* SPDX-License-Identifier: Apache-2.0
 * HTTPS requests to the API server: libcurl's multi interface driven by
 * the daemon's dp_loop (see kube.h for why). libcurl is dlopen()ed on the
 * first client (curl-load.c): every call goes through dp_curl. */
#include <fcntl.h>
#include <stdio.h>

#include "base/fileio.h"
#include "base/log.h"
#include "base/list.h"
#include "base/strbuf.h"
#include "doc/doc.h"
#include "kube/curl-api.h"
#include "kube/kube.h"

/* Watch lines handed to their callback per loop turn: past this many bytes
 * or lines the rest waits for the next turn, and the transfer is paused
 * (curl stops reading the socket) while this much is waiting, so a flood of
 * events from the API server cannot hold the loop (issue 21, F2). At least
 * one line goes out per turn, whatever its size. */
#define STREAM_TURN_BYTES (256u << 10)
#define STREAM_TURN_LINES 256u

struct dp_kube_client {
        dp_loop *loop;
        CURLM *multi;
        dp_loop_source *timer;
        char *server;
        char *ca_file, *ca_data, *cert_file, *cert_data, *key_file, *key_data;
        size_t ca_len, cert_len, key_len;
        char *token, *token_file;
        bool insecure;
        dp_kube_request *requests; /* doubly linked */
        uint64_t n_requests, n_errors;
        bool in_dispatch;
        dp_loop_source *drain; /* hands waiting watch lines out (on_drain) */
};

struct dp_kube_request {
        dp_kube_client *client;
        dp_kube_request *prev, *next;
        CURL *easy;
        struct curl_slist *headers;
        char *body;
        dp_strbuf resp;
        bool too_big;
        char errbuf[CURL_ERROR_SIZE];
        dp_kube_done_fn done;
        void *userdata;
        /* Streaming: resp holds the lines not handed out yet, from head; the
         * last complete one ends at complete (after its '\n'), the rest is
         * a partial line. Each byte is searched once (write_cb), each line
         * parsed once (on_drain). */
        dp_kube_line_fn line;
        size_t head, complete;
        bool lines_body; /* the answer was 200: the body is lines */
        bool paused;     /* write_cb said CURL_WRITEFUNC_PAUSE */
        bool too_long;   /* a line passed DP_KUBE_MAX_LINE: transfer aborted */
        bool ended;      /* the transfer is over: done waits for the lines */
        long end_status;
        const char *end_msg; /* static, or r->errbuf */
        bool delivering;     /* on_drain is calling line */
        bool cancelled;      /* ... and line cancelled the request */
        bool held;           /* dp_kube_request_hold(): no lines, no done */
};

/* One per socket curl uses (curl_multi_assign). */
typedef struct {
        dp_kube_client *client;
        dp_loop_source *src;
} sock_watch;

static void request_free(dp_kube_request *r) {
        dp_kube_client *c = r->client;
        DP_LIST_REMOVE(c->requests, r);
        if (r->easy) {
                dp_curl.multi_remove_handle(c->multi, r->easy);
                dp_curl.easy_cleanup(r->easy);
        }
        dp_curl.slist_free_all(r->headers);
        free(r->body);
        dp_strbuf_done(&r->resp);
        free(r);
}

static void arm_drain(dp_kube_client *c) {
        /* the next loop turn: other sources first */
        (void)dp_loop_source_set_time(c->drain, dp_loop_now() + 1);
}

/* Call done and free the request. A stream's 200 body was its lines: done
 * gets an empty one. */
static void request_finish(dp_kube_request *r, long status, const char *msg) {
        dp_kube_client *c = r->client;
        c->n_requests++;
        if (status == 0 || (status >= 400 && status != 404 && status != 409)) c->n_errors++;
        if (dp_strbuf_failed(&r->resp)) {
                status = 0;
                msg = "out of memory";
        }
        bool lines = r->lines_body || dp_strbuf_failed(&r->resp);
        r->done(status, lines ? "" : dp_strbuf_str(&r->resp), lines ? 0 : r->resp.len, msg, r->userdata);
        request_free(r);
}

static void check_done(dp_kube_client *c) {
        CURLMsg *m;
        int left;
        while ((m = dp_curl.multi_info_read(c->multi, &left))) {
                if (m->msg != CURLMSG_DONE) continue;
                dp_kube_request *r = NULL;
                dp_curl.easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&r);
                if (!r) continue;
                long status = 0;
                CURLcode res = m->data.result;
                if (res == CURLE_OK) dp_curl.easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
                const char *msg = NULL;
                if (res != CURLE_OK) {
                        msg = r->too_long ? "a watch line longer than " DP_KUBE_MAX_LINE_TEXT
                                            " (the API server stores no object over 3 MiB): the stream was dropped"
                              : r->too_big ? "response larger than the limit"
                                           : (r->errbuf[0] ? r->errbuf : dp_curl.easy_strerror(res));
                        status = 0;
                }
                /* Detach first: the callback may start new requests. */
                dp_curl.multi_remove_handle(c->multi, r->easy);
                if ((r->complete > r->head || r->held) && !dp_strbuf_failed(&r->resp)) {
                        /* lines still waiting, or the last one still being
                         * worked on: done after them (on_drain) */
                        r->ended = true;
                        r->end_status = status;
                        r->end_msg = msg;
                        continue;
                }
                request_finish(r, status, msg);
        }
}

static int on_timer(dp_loop_source *s, uint64_t now, void *ud) {
        dp_kube_client *c = ud;
        int running;
        dp_curl.multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
        check_done(c);
        return 0;
}

static int on_socket_event(dp_loop_source *s, int fd, uint32_t events, void *ud) {
        dp_kube_client *c = ud;
        int flags = 0, running;
        if (events & EPOLLIN) flags |= CURL_CSELECT_IN;
        if (events & EPOLLOUT) flags |= CURL_CSELECT_OUT;
        if (events & (EPOLLERR | EPOLLHUP)) flags |= CURL_CSELECT_ERR;
        dp_curl.multi_socket_action(c->multi, fd, flags, &running);
        check_done(c);
        return 0;
}

static int socket_cb(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp) {
        dp_kube_client *c = userp;
        sock_watch *w = socketp;
        if (what == CURL_POLL_REMOVE) {
                if (w) {
                        dp_loop_source_free(w->src);
                        free(w);
                        dp_curl.multi_assign(c->multi, fd, NULL);
                }
                return 0;
        }
        uint32_t ev = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);
        if (!w) {
                w = calloc(1, sizeof *w);
                if (!w) return -1;
                w->client = c;
                if (dp_loop_add_io(c->loop, fd, ev, on_socket_event, c, &w->src) < 0) {
                        free(w);
                        return -1;
                }
                dp_curl.multi_assign(c->multi, fd, w);
                return 0;
        }
        return dp_loop_source_set_events(w->src, ev) < 0 ? -1 : 0;
}

static int timer_cb(CURLM *multi, long timeout_ms, void *userp) {
        dp_kube_client *c = userp;
        if (timeout_ms < 0) return dp_loop_source_set_time(c->timer, 0) < 0 ? -1 : 0;
        /* 0 means "now": fire on the next loop round, never recursively. */
        uint64_t t = dp_loop_now() + (uint64_t)timeout_ms * 1000 + 1;
        return dp_loop_source_set_time(c->timer, t) < 0 ? -1 : 0;
}

/* A stream's body: keep it, note where its last complete line ends, and
 * leave the lines to on_drain (never parsed here, inside curl). */
static size_t write_lines(dp_kube_request *r, const char *ptr, size_t n) {
        r->lines_body = true;
        if (r->complete - r->head >= STREAM_TURN_BYTES) {
                /* curl keeps this chunk and reads no more until on_drain
                 * resumes the transfer */
                r->paused = true;
                return CURL_WRITEFUNC_PAUSE;
        }
        dp_strbuf_append(&r->resp, ptr, n);
        if (dp_strbuf_failed(&r->resp)) return 0;
        const char *nl = memrchr(ptr, '\n', n);
        if (nl) {
                r->complete = r->resp.len - n + (size_t)(nl - ptr) + 1;
                arm_drain(r->client);
        }
        if (r->resp.len - r->complete > DP_KUBE_MAX_LINE) {
                r->too_long = true;
                return 0;
        }
        return n;
}

static size_t write_cb(char *ptr, size_t size, size_t nmemb, void *ud) {
        dp_kube_request *r = ud;
        size_t n = size * nmemb;
        if (r->line) {
                long status = 0;
                dp_curl.easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
                if (status == 200) return write_lines(r, ptr, n);
                /* an error body: kept whole for done */
        }
        if (r->resp.len + n > DP_KUBE_MAX_RESPONSE) {
                r->too_big = true;
                return 0;
        }
        dp_strbuf_append(&r->resp, ptr, n);
        return n;
}

/* Hand out r's waiting lines while the turn's budget lasts. False when r
 * is gone (cancelled by its callback, or finished). */
static bool drain_request(dp_kube_request *r, size_t *bytes, size_t *lines) {
        r->delivering = true;
        while (r->head < r->complete && !r->cancelled && !r->held &&
               (*lines == 0 || (*bytes < STREAM_TURN_BYTES && *lines < STREAM_TURN_LINES))) {
                char *p = r->resp.buf + r->head;
                char *nl = memchr(p, '\n', r->complete - r->head);
                size_t len = (size_t)(nl - p);
                *nl = 0;
                r->head += len + 1;
                *bytes += len;
                (*lines)++;
                if (len) r->line(p, len, r->userdata);
        }
        r->delivering = false;
        if (r->cancelled) {
                request_free(r);
                return false;
        }
        if (r->head == r->complete && r->ended && !r->held) {
                request_finish(r, r->end_status, r->end_msg);
                return false;
        }
        if (r->head > 0 && r->head >= r->resp.len / 2) {
                /* drop what was handed out; halving keeps the copies linear */
                memmove(r->resp.buf, r->resp.buf + r->head, r->resp.len - r->head);
                dp_strbuf_truncate(&r->resp, r->resp.len - r->head);
                r->complete -= r->head;
                r->head = 0;
        }
        if (r->paused && !r->ended && r->complete - r->head < STREAM_TURN_BYTES) {
                r->paused = false;
                (void)dp_curl.easy_pause(r->easy, CURLPAUSE_CONT); /* may call write_cb at once */
        }
        return true;
}

static dp_kube_request *first_waiting(dp_kube_client *c) {
        for (dp_kube_request *r = c->requests; r; r = r->next)
                if (r->line && !r->held && (r->complete > r->head || r->ended)) return r;
        return NULL;
}

void dp_kube_request_hold(dp_kube_request *r, bool hold) {
        if (!r || r->held == hold) return;
        r->held = hold;
        if (!hold) arm_drain(r->client);
}

/* One turn's worth of watch lines; the rest on the next turn. Callbacks may
 * start and cancel requests, so the list is searched again each time. */
static int on_drain(dp_loop_source *s, uint64_t now, void *ud) {
        dp_kube_client *c = ud;
        size_t bytes = 0, lines = 0;
        dp_kube_request *r;
        while ((r = first_waiting(c))) {
                if (bytes >= STREAM_TURN_BYTES || lines >= STREAM_TURN_LINES) {
                        arm_drain(c);
                        break;
                }
                (void)drain_request(r, &bytes, &lines);
        }
        return 0;
}

static char *dup_blob(const char *p, size_t n) {
        if (!p) return NULL;
        char *b = malloc(n + 1);
        if (b) {
                memcpy(b, p, n);
                b[n] = 0;
        }
        return b;
}

int dp_kube_client_new(dp_loop *l, const dp_kube_config *cfg, dp_kube_client **ret) {
        assert_return(l && cfg && cfg->server && ret, -EINVAL);
        int q = dp_kube_curl_load(NULL, NULL);
        if (q < 0) return q;
        _cleanup_(dp_kube_client_freep) dp_kube_client *c = calloc(1, sizeof *c);
        if (!c) return -ENOMEM;
        c->loop = l;
        c->server = strdup(cfg->server);
        c->ca_file = cfg->ca_file ? strdup(cfg->ca_file) : NULL;
        c->cert_file = cfg->cert_file ? strdup(cfg->cert_file) : NULL;
        c->key_file = cfg->key_file ? strdup(cfg->key_file) : NULL;
        c->token = cfg->token ? strdup(cfg->token) : NULL;
        c->token_file = cfg->token_file ? strdup(cfg->token_file) : NULL;
        c->ca_data = dup_blob(cfg->ca_data, cfg->ca_len);
        c->cert_data = dup_blob(cfg->cert_data, cfg->cert_len);
        c->key_data = dup_blob(cfg->key_data, cfg->key_len);
        c->ca_len = cfg->ca_len;
        c->cert_len = cfg->cert_len;
        c->key_len = cfg->key_len;
        c->insecure = cfg->insecure;
        if (!c->server || (cfg->ca_file && !c->ca_file) || (cfg->cert_file && !c->cert_file) ||
            (cfg->key_file && !c->key_file) || (cfg->token && !c->token) || (cfg->token_file && !c->token_file) ||
            (cfg->ca_data && !c->ca_data) || (cfg->cert_data && !c->cert_data) || (cfg->key_data && !c->key_data))
                return -ENOMEM;
        c->multi = dp_curl.multi_init();
        if (!c->multi) return -EIO;
        int r = dp_loop_add_timer(l, 0, on_timer, c, &c->timer);
        if (r >= 0) r = dp_loop_add_timer(l, 0, on_drain, c, &c->drain);
        if (r < 0) return r;
        dp_curl.multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
        dp_curl.multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
        dp_curl.multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
        dp_curl.multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
        *ret = TAKE_PTR(c);
        return 0;
}

dp_kube_client *dp_kube_client_free(dp_kube_client *c) {
        if (!c) return NULL;
        while (c->requests)
                request_free(c->requests);
        if (c->multi) dp_curl.multi_cleanup(c->multi); /* removes its sockets through socket_cb */
        dp_loop_source_free(c->timer);
        dp_loop_source_free(c->drain);
        dp_free_many(c->server, c->ca_file, c->ca_data, c->cert_file, c->cert_data, c->key_file, c->key_data, c->token,
                     c->token_file);
        free(c);
        return NULL;
}

dp_loop *dp_kube_client_loop(const dp_kube_client *c) { return c ? c->loop : NULL; }
uint64_t dp_kube_client_requests(const dp_kube_client *c) { return c ? c->n_requests : 0; }
uint64_t dp_kube_client_errors(const dp_kube_client *c) { return c ? c->n_errors : 0; }
void dp_kube_client_count_error(dp_kube_client *c) {
        if (c) c->n_errors++;
}

/* The bearer token: fixed, or re-read from its file (projected tokens are
 * rotated by the kubelet). A missing file leaves the request without one:
 * the API server's 401 then says so. */
#define DP_KUBE_MAX_TOKEN 16383 /* bytes of a token file */
static char *current_token(const dp_kube_client *c) {
        if (c->token) return strdup(c->token);
        if (!c->token_file) return NULL;
        char *buf = NULL;
        size_t n = 0;
        dp_error e = DP_ERROR_INIT;
        if (dp_read_file(c->token_file, DP_KUBE_MAX_TOKEN, &buf, &n, &e) < 0) {
                log_warning("API token %s", dp_error_msg(&e));
                return NULL;
        }
        if (n == 0) {
                free(buf);
                return NULL;
        }
        while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
                buf[--n] = 0;
        return buf;
}

static int blob_opt(CURL *e, CURLoption opt, char *data, size_t len) {
        struct curl_blob b = {.data = data, .len = len, .flags = CURL_BLOB_NOCOPY};
        return dp_curl.easy_setopt(e, opt, &b) == CURLE_OK ? 0 : -EIO;
}

static int setup_easy(dp_kube_client *c, dp_kube_request *r, const char *method, const char *path, size_t len,
                      unsigned timeout_ms) {
        CURL *e = r->easy;
        _cleanup_free_ char *url = dp_asprintf("%s%s", c->server, path);
        _cleanup_free_ char *tok = current_token(c);
        _cleanup_free_ char *auth = tok ? dp_asprintf("Authorization: Bearer %s", tok) : NULL;
        if (!url || (tok && !auth)) return -ENOMEM;
        struct curl_slist *h = dp_curl.slist_append(NULL, "Accept: application/json");
        if (h && r->body) h = dp_curl.slist_append(h, "Content-Type: application/json") ? h : NULL;
        if (h && auth) h = dp_curl.slist_append(h, auth) ? h : NULL;
        if (!h) return -ENOMEM;
        r->headers = h;
        dp_curl.easy_setopt(e, CURLOPT_URL, url);
        dp_curl.easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
        dp_curl.easy_setopt(e, CURLOPT_HTTPHEADER, r->headers);
        dp_curl.easy_setopt(e, CURLOPT_USERAGENT, "devplane/" DP_VERSION);
        dp_curl.easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
        dp_curl.easy_setopt(e, CURLOPT_PROTOCOLS_STR, "https,http");
        dp_curl.easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
        dp_curl.easy_setopt(e, CURLOPT_TIMEOUT_MS,
                            r->line ? (long)timeout_ms : (long)(timeout_ms ? timeout_ms : 30000));
        /* A watch pauses its transfer while lines wait (write_lines): over
         * HTTP/1.1 that is plain TCP backpressure; libcurl 7.x's HTTP/2
         * pausing has had stalls after resuming, and the API server serves
         * watches on either. */
        if (r->line) dp_curl.easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
        dp_curl.easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
        dp_curl.easy_setopt(e, CURLOPT_WRITEDATA, r);
        dp_curl.easy_setopt(e, CURLOPT_ERRORBUFFER, r->errbuf);
        dp_curl.easy_setopt(e, CURLOPT_PRIVATE, r);
        if (r->body) {
                dp_curl.easy_setopt(e, CURLOPT_POSTFIELDS, r->body);
                dp_curl.easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
        } else if (streq(method, "GET")) {
                dp_curl.easy_setopt(e, CURLOPT_HTTPGET, 1L);
        }
        if (c->insecure) {
                dp_curl.easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
                dp_curl.easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
        }
        if (c->ca_file) dp_curl.easy_setopt(e, CURLOPT_CAINFO, c->ca_file);
        if (c->ca_data && blob_opt(e, CURLOPT_CAINFO_BLOB, c->ca_data, c->ca_len) < 0) return -EIO;
        if (c->cert_file) dp_curl.easy_setopt(e, CURLOPT_SSLCERT, c->cert_file);
        if (c->cert_data && blob_opt(e, CURLOPT_SSLCERT_BLOB, c->cert_data, c->cert_len) < 0) return -EIO;
        if (c->key_file) dp_curl.easy_setopt(e, CURLOPT_SSLKEY, c->key_file);
        if (c->key_data && blob_opt(e, CURLOPT_SSLKEY_BLOB, c->key_data, c->key_len) < 0) return -EIO;
        if (c->cert_file || c->cert_data) dp_curl.easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
        return 0;
}

static int request_start(dp_kube_client *c, const char *method, const char *path, const char *body, size_t len,
                         unsigned timeout_ms, dp_kube_line_fn line, dp_kube_done_fn done, void *userdata,
                         dp_kube_request **ret) {
        assert_return(c && method && path && path[0] == '/' && done, -EINVAL);
        dp_kube_request *r = calloc(1, sizeof *r);
        if (!r) return -ENOMEM;
        r->client = c;
        r->done = done;
        r->line = line;
        r->userdata = userdata;
        DP_LIST_PREPEND(c->requests, r);
        int q = 0;
        if (body && !(r->body = dup_blob(body, len))) q = -ENOMEM;
        if (q >= 0 && !(r->easy = dp_curl.easy_init())) q = -EIO;
        if (q >= 0) q = setup_easy(c, r, method, path, len, timeout_ms);
        if (q >= 0 && dp_curl.multi_add_handle(c->multi, r->easy) != CURLM_OK) q = -EIO;
        if (q < 0) {
                if (r->easy) {
                        dp_curl.easy_cleanup(r->easy);
                        r->easy = NULL;
                }
                request_free(r);
                return q;
        }
        log_debug("API %s %s", method, path);
        if (ret) *ret = r;
        return 0;
}

int dp_kube_request_start(dp_kube_client *c, const char *method, const char *path, const char *body, size_t len,
                          unsigned timeout_ms, dp_kube_done_fn done, void *userdata, dp_kube_request **ret) {
        return request_start(c, method, path, body, len, timeout_ms, NULL, done, userdata, ret);
}

int dp_kube_stream_start(dp_kube_client *c, const char *path, unsigned timeout_ms, dp_kube_line_fn line,
                         dp_kube_done_fn done, void *userdata, dp_kube_request **ret) {
        assert_return(line, -EINVAL);
        return request_start(c, "GET", path, NULL, 0, timeout_ms, line, done, userdata, ret);
}

void dp_kube_request_cancel(dp_kube_request *r) {
        if (!r) return;
        if (r->delivering) /* from its own line callback: on_drain frees it */
                r->cancelled = true;
        else
                request_free(r);
}

char *dp_kube_query_escape(const char *s) {
        dp_strbuf sb = DP_STRBUF_INIT;
        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
                    *p == '.' || *p == '_' || *p == '~')
                        dp_strbuf_putc(&sb, (char)*p);
                else
                        dp_strbuf_printf(&sb, "%%%02X", *p);
        }
        dp_strbuf_putc(&sb, 0);
        return dp_strbuf_steal(&sb);
}

void dp_kube_status_message(const char *body, size_t len, char *buf, size_t size) {
        _cleanup_(dp_doc_set_freep) dp_doc_set *set = dp_doc_set_new();
        const char *msg = NULL;
        if (set && len && dp_doc_parse(set, body, len, "response", NULL) == 0 && dp_doc_count(set) == 1)
                (void)dp_doc_get_str(dp_doc_get(dp_doc_root(set, 0), "message"), true, &msg, NULL);
        if (msg)
                snprintf(buf, size, "%s", msg);
        else
                snprintf(buf, size, "%.*s", (int)DP_MIN(len, 200), body);
}

uint64_t dp_kube_backoff_next(dp_kube_backoff *b) {
        b->next_usec = b->next_usec ? DP_MIN(b->next_usec * 2, b->max_usec) : b->first_usec;
        return b->next_usec;
}

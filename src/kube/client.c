/* SPDX-License-Identifier: Apache-2.0
 * HTTPS requests to the API server: libcurl's multi interface driven by
 * the daemon's dp_loop (see kube.h for why). libcurl is dlopen()ed on the
 * first client (curl-load.c): every call goes through dp_curl. */
#include <fcntl.h>
#include <stdio.h>

#include "base/doc.h"
#include "base/fileio.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "kube/curl-api.h"
#include "kube/kube.h"

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
        dp_kube_line_fn line; /* streaming: resp holds the incomplete line */
        void *userdata;
};

/* One per socket curl uses (curl_multi_assign). */
typedef struct {
        dp_kube_client *client;
        dp_loop_source *src;
} sock_watch;

static void request_free(dp_kube_request *r) {
        dp_kube_client *c = r->client;
        if (r->prev)
                r->prev->next = r->next;
        else
                c->requests = r->next;
        if (r->next) r->next->prev = r->prev;
        if (r->easy) {
                dp_curl.multi_remove_handle(c->multi, r->easy);
                dp_curl.easy_cleanup(r->easy);
        }
        dp_curl.slist_free_all(r->headers);
        free(r->body);
        dp_strbuf_done(&r->resp);
        free(r);
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
                        msg = r->too_big ? "response larger than the limit"
                                         : (r->errbuf[0] ? r->errbuf : dp_curl.easy_strerror(res));
                        status = 0;
                }
                c->n_requests++;
                if (status == 0 || (status >= 400 && status != 404 && status != 409)) c->n_errors++;
                dp_kube_done_fn done = r->done;
                void *ud = r->userdata;
                /* Detach first: the callback may start new requests. */
                dp_curl.multi_remove_handle(c->multi, r->easy);
                if (dp_strbuf_failed(&r->resp)) {
                        status = 0;
                        msg = "out of memory";
                }
                done(status, dp_strbuf_str(&r->resp), r->resp.len, msg, ud);
                request_free(r);
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

static size_t write_cb(char *ptr, size_t size, size_t nmemb, void *ud) {
        dp_kube_request *r = ud;
        size_t n = size * nmemb;
        if (r->resp.len + n > DP_KUBE_MAX_RESPONSE) {
                r->too_big = true;
                return 0;
        }
        dp_strbuf_append(&r->resp, ptr, n);
        if (!r->line || dp_strbuf_failed(&r->resp)) return n;
        long status = 0;
        dp_curl.easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
        if (status != 200) return n; /* an error body: kept whole for done */
        size_t start = 0;
        for (size_t i = 0; i < r->resp.len; i++)
                if (r->resp.buf[i] == '\n') {
                        r->resp.buf[i] = 0;
                        if (i > start) r->line(r->resp.buf + start, i - start, r->userdata);
                        start = i + 1;
                }
        if (start) {
                memmove(r->resp.buf, r->resp.buf + start, r->resp.len - start);
                dp_strbuf_truncate(&r->resp, r->resp.len - start);
        }
        return n;
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
        free(c->server);
        free(c->ca_file);
        free(c->ca_data);
        free(c->cert_file);
        free(c->cert_data);
        free(c->key_file);
        free(c->key_data);
        free(c->token);
        free(c->token_file);
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
        r->next = c->requests;
        if (c->requests) c->requests->prev = r;
        c->requests = r;
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
        if (r) request_free(r);
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

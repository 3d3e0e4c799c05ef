/* SPDX-License-Identifier: Apache-2.0
 * Kubernetes' URL, IP and CIDR libraries (apiserver pkg/cel/library
 * urls.go, ip.go, cidr.go). IP parsing follows Go's netip: no zones, no
 * IPv4-mapped IPv6 for ip()/cidr(), no leading zeros in IPv4 octets. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>

#include "cel/cel-internal.h"

#define A0 args[0]
#define A1 args[1]
#define FN(name) static cel_value name(cel_ctx *c, const cel_value *args, size_t n)

static bool ipv4_strict(const char *s) {
        /* four decimal octets, no leading zeros */
        int parts = 0;
        const char *p = s;
        while (*p) {
                const char *q = p;
                int v = 0;
                while (*q >= '0' && *q <= '9') {
                        v = v * 10 + (*q - '0');
                        if (v > 255) return false;
                        q++;
                }
                if (q == p || (q - p > 1 && *p == '0')) return false;
                parts++;
                if (*q == '.') q++;
                else if (*q) return false;
                p = q;
                if (!*p && q[-1] == '.') return false;
        }
        return parts == 4;
}

static int parse_ip(const char *s, size_t n, cel_ip *ret) {
        char buf[64];
        if (n == 0 || n >= sizeof buf || memchr(s, 0, n)) return -EINVAL;
        memcpy(buf, s, n);
        buf[n] = 0;
        memset(ret, 0, sizeof(*ret));
        if (strchr(buf, '%')) return -EINVAL;
        if (strchr(buf, ':')) {
                if (inet_pton(AF_INET6, buf, ret->addr) != 1) return -EINVAL;
                ret->family = 6;
                static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
                if (!memcmp(ret->addr, mapped, 12) && strchr(buf, '.')) return -EINVAL;
                return 0;
        }
        if (!ipv4_strict(buf)) return -EINVAL;
        if (inet_pton(AF_INET, buf, ret->addr + 12) != 1) return -EINVAL;
        ret->family = 4;
        return 0;
}

static int parse_cidr(const char *s, size_t n, cel_ip *ret) {
        const char *slash = memchr(s, '/', n);
        if (!slash) return -EINVAL;
        if (parse_ip(s, (size_t)(slash - s), ret) < 0) return -EINVAL;
        const char *p = slash + 1, *end = s + n;
        if (p == end || (end - p > 1 && *p == '0')) return -EINVAL;
        int v = 0;
        for (; p < end; p++) {
                if (*p < '0' || *p > '9') return -EINVAL;
                v = v * 10 + (*p - '0');
                if (v > 128) return -EINVAL;
        }
        if (v > (ret->family == 4 ? 32 : 128)) return -EINVAL;
        ret->prefix = (uint8_t)v;
        return 0;
}

static cel_value ip_value(cel_ctx *c, const cel_ip *ip, uint8_t kind) {
        cel_ip *x = cel_alloc(c->arena, sizeof(*x));
        if (!x) return cel_oom(c);
        *x = *ip;
        return (cel_value){.kind = kind, .ip = x};
}

/* v itself when it is an IP (kind CV_IP) or CIDR (CV_CIDR) value, else the
 * string v parsed as one into *buf; NULL when it does not parse. */
static const cel_ip *as_net(cel_value v, cel_value_kind kind, cel_ip *buf) {
        if (v.kind == kind) return v.ip;
        int r = kind == CV_CIDR ? parse_cidr(v.s.p, v.s.n, buf) : parse_ip(v.s.p, v.s.n, buf);
        return r < 0 ? NULL : buf;
}

/* ip() and cidr() of a string, or cel-go's parse error */
static cel_value net_value(cel_ctx *c, cel_value s, cel_value_kind kind) {
        cel_ip ip;
        if (as_net(s, kind, &ip)) return ip_value(c, &ip, kind);
        int len = (int)DP_MIN(s.s.n, 64);
        if (kind == CV_IP) return cel_error(c, "IP Address '%.*s' parse error", len, s.s.p);
        return cel_error(c, "network address parse error during conversion from string: %.*s", len, s.s.p);
}

static cel_value is_net(cel_value s, cel_value_kind kind) {
        cel_ip ip;
        return cel_bool(as_net(s, kind, &ip) != NULL);
}

FN(ip_fn) { (void)n; return net_value(c, A0, CV_IP); }
FN(is_ip) { (void)n; (void)c; return is_net(A0, CV_IP); }
FN(ip_is_canonical) {
        (void)n;
        cel_ip ip;
        if (parse_ip(A0.s.p, A0.s.n, &ip) < 0) return cel_error(c, "IP Address '%.*s' parse error", (int)DP_MIN(A0.s.n, 64), A0.s.p);
        dp_strbuf sb = DP_STRBUF_INIT;
        cel_value_format(&sb, (cel_value){.kind = CV_IP, .ip = &ip});
        bool oom = dp_strbuf_failed(&sb), r = sb.len == A0.s.n && !memcmp(dp_strbuf_str(&sb), A0.s.p, A0.s.n);
        dp_strbuf_done(&sb);
        return oom ? cel_oom(c) : cel_bool(r);
}
FN(ip_family) { (void)n; (void)c; return cel_int(A0.ip->family); }
static const uint8_t *v4(const cel_ip *ip) { return ip->addr + 12; }
FN(ip_is_unspecified) {
        (void)n;
        (void)c;
        static const uint8_t z[16];
        return cel_bool(A0.ip->family == 4 ? !memcmp(v4(A0.ip), z, 4) : !memcmp(A0.ip->addr, z, 16));
}
FN(ip_is_loopback) {
        (void)n;
        (void)c;
        static const uint8_t lo6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
        return cel_bool(A0.ip->family == 4 ? v4(A0.ip)[0] == 127 : !memcmp(A0.ip->addr, lo6, 16));
}
FN(ip_is_ll_multicast) {
        (void)n;
        (void)c;
        if (A0.ip->family == 4) return cel_bool(v4(A0.ip)[0] == 224 && v4(A0.ip)[1] == 0 && v4(A0.ip)[2] == 0);
        return cel_bool(A0.ip->addr[0] == 0xff && (A0.ip->addr[1] & 0x0f) == 0x02);
}
FN(ip_is_ll_unicast) {
        (void)n;
        (void)c;
        if (A0.ip->family == 4) return cel_bool(v4(A0.ip)[0] == 169 && v4(A0.ip)[1] == 254);
        return cel_bool(A0.ip->addr[0] == 0xfe && (A0.ip->addr[1] & 0xc0) == 0x80);
}
FN(ip_is_global_unicast) {
        (void)n;
        (void)c;
        const cel_ip *ip = A0.ip;
        if (ip->family == 4) {
                const uint8_t *a = v4(ip);
                if (!memcmp(a, "\xff\xff\xff\xff", 4) || a[0] == 0 || a[0] == 127 || a[0] >= 224 ||
                    (a[0] == 169 && a[1] == 254))
                        return cel_bool(false);
                return cel_bool(true);
        }
        static const uint8_t z[16];
        static const uint8_t lo6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
        if (!memcmp(ip->addr, z, 16) || !memcmp(ip->addr, lo6, 16) || ip->addr[0] == 0xff ||
            (ip->addr[0] == 0xfe && (ip->addr[1] & 0xc0) == 0x80))
                return cel_bool(false);
        return cel_bool(true);
}

static void mask_ip(cel_ip *ip) {
        int bits = ip->prefix + (ip->family == 4 ? 96 : 0);
        for (int i = 0; i < 16; i++) {
                int keep = bits - i * 8;
                if (keep >= 8) continue;
                ip->addr[i] &= keep <= 0 ? 0 : (uint8_t)(0xff << (8 - keep));
        }
}
FN(cidr_fn) { (void)n; return net_value(c, A0, CV_CIDR); }
FN(is_cidr) { (void)n; (void)c; return is_net(A0, CV_CIDR); }
static bool cidr_contains(const cel_ip *net, const cel_ip *ip, int prefix) {
        if (net->family != ip->family || prefix < net->prefix) return false;
        cel_ip a = *net, b = *ip;
        b.prefix = net->prefix;
        mask_ip(&a);
        mask_ip(&b);
        return !memcmp(a.addr, b.addr, 16);
}
FN(cidr_contains_ip) {
        (void)n;
        cel_ip ip;
        const cel_ip *p = as_net(A1, CV_IP, &ip);
        if (!p) return cel_error(c, "IP Address parse error");
        return cel_bool(cidr_contains(A0.ip, p, A0.ip->family == 4 ? 32 : 128));
}
FN(cidr_contains_cidr) {
        (void)n;
        cel_ip ip;
        const cel_ip *p = as_net(A1, CV_CIDR, &ip);
        if (!p) return cel_error(c, "network address parse error");
        return cel_bool(cidr_contains(A0.ip, p, p->prefix));
}
FN(cidr_ip) {
        (void)n;
        cel_ip ip = *A0.ip;
        ip.prefix = 0;
        return ip_value(c, &ip, CV_IP);
}
FN(cidr_masked) {
        (void)n;
        cel_ip ip = *A0.ip;
        mask_ip(&ip);
        return ip_value(c, &ip, CV_CIDR);
}
FN(cidr_prefix) { (void)n; (void)c; return cel_int(A0.ip->prefix); }
FN(net_to_string) { (void)n; return cel_value_to_string(c, A0); }

/* ---- URL: Go url.ParseRequestURI subset ---- */
typedef struct url_parts {
        const char *scheme, *host, *path, *query;
        size_t scheme_n, host_n, path_n, query_n;
} url_parts;

static int parse_url(const char *s, url_parts *u) {
        memset(u, 0, sizeof(*u));
        if (!*s) return -EINVAL;
        for (const char *q = s; *q; q++)
                if ((unsigned char)*q < 0x21 || *q == 0x7f) return -EINVAL;
        const char *p = s;
        if (*p != '/') {
                const char *colon = strchr(p, ':');
                if (!colon || colon == p) return -EINVAL;
                for (const char *q = p; q < colon; q++)
                        if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
                              (q > p && ((*q >= '0' && *q <= '9') || *q == '+' || *q == '-' || *q == '.'))))
                                return -EINVAL;
                u->scheme = p;
                u->scheme_n = (size_t)(colon - p);
                p = colon + 1;
                if (*p != '/') return -EINVAL; /* opaque URLs are not request URIs */
        }
        const char *frag = strchr(p, '#');
        if (frag) return -EINVAL;
        if (p[0] == '/' && p[1] == '/') {
                p += 2;
                const char *e = p + strcspn(p, "/?");
                u->host = p;
                u->host_n = (size_t)(e - p);
                p = e;
        }
        const char *q = strchr(p, '?');
        u->path = p;
        u->path_n = q ? (size_t)(q - p) : strlen(p);
        if (q) {
                u->query = q + 1;
                u->query_n = strlen(q + 1);
        }
        return 0;
}

static const char *url_of(cel_value v) { return v.url; }
FN(url_fn) {
        (void)n;
        char *s = cel_strndup(c->arena, A0.s.p, A0.s.n);
        if (!s) return cel_oom(c);
        url_parts u;
        if (strlen(s) != A0.s.n || parse_url(s, &u) < 0) return cel_error(c, "URL parse error during conversion from string: %s", s);
        return (cel_value){.kind = CV_URL, .url = s};
}
FN(is_url) {
        (void)n;
        char buf[2048];
        if (A0.s.n >= sizeof buf || memchr(A0.s.p, 0, A0.s.n)) return cel_bool(false);
        (void)c;
        memcpy(buf, A0.s.p, A0.s.n);
        buf[A0.s.n] = 0;
        url_parts u;
        return cel_bool(parse_url(buf, &u) == 0);
}
FN(url_scheme) {
        (void)n;
        url_parts u;
        parse_url(url_of(A0), &u);
        (void)c;
        return cel_str(u.scheme ? u.scheme : "", u.scheme_n);
}
FN(url_host) {
        (void)n;
        (void)c;
        url_parts u;
        parse_url(url_of(A0), &u);
        return cel_str(u.host ? u.host : "", u.host_n);
}
static void host_split(const url_parts *u, const char **h, size_t *hn, const char **port, size_t *pn) {
        *h = u->host ? u->host : "";
        *hn = u->host_n;
        *port = "";
        *pn = 0;
        const char *at = u->host ? memchr(u->host, '@', u->host_n) : NULL;
        if (at) {
                *hn -= (size_t)(at + 1 - *h);
                *h = at + 1;
        }
        if (*hn && (*h)[0] == '[') {
                const char *rb = memchr(*h, ']', *hn);
                if (rb) {
                        if ((size_t)(rb + 1 - *h) < *hn && rb[1] == ':') {
                                *port = rb + 2;
                                *pn = *hn - (size_t)(rb + 2 - *h);
                        }
                        *hn = (size_t)(rb - *h - 1);
                        (*h)++;
                        return;
                }
        }
        for (size_t i = *hn; i > 0; i--)
                if ((*h)[i - 1] == ':') {
                        *port = *h + i;
                        *pn = *hn - i;
                        *hn = i - 1;
                        return;
                }
}
/* The URL's host (port false) or port (port true), as Go's url.URL splits them. */
static cel_value url_host_part(cel_value v, bool port) {
        url_parts u;
        parse_url(url_of(v), &u);
        const char *h, *pt;
        size_t hn, pn;
        host_split(&u, &h, &hn, &pt, &pn);
        return port ? cel_str(pt, pn) : cel_str(h, hn);
}
FN(url_hostname) {
        (void)n;
        (void)c;
        return url_host_part(A0, false);
}
FN(url_port) {
        (void)n;
        (void)c;
        return url_host_part(A0, true);
}
FN(url_path) {
        (void)n;
        (void)c;
        url_parts u;
        parse_url(url_of(A0), &u);
        return cel_str(u.path, u.path_n);
}
static cel_value unescape(cel_ctx *c, const char *s, size_t n) {
        char *o = cel_alloc(c->arena, n + 1);
        if (!o) return cel_oom(c);
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
                if (s[i] == '+') o[k++] = ' ';
                else if (s[i] == '%') {
                        unsigned v;
                        if (i + 2 >= n) return cel_error(c, "invalid URL escape");
                        char hx[3] = {s[i + 1], s[i + 2], 0};
                        if (sscanf(hx, "%2x", &v) != 1) return cel_error(c, "invalid URL escape");
                        o[k++] = (char)v;
                        i += 2;
                } else
                        o[k++] = s[i];
        }
        return cel_str(o, k);
}
FN(url_query) {
        (void)n;
        url_parts u;
        parse_url(url_of(A0), &u);
        cel_map *m = cel_map_new(c, 0);
        if (!m) return cel_oom(c);
        const char *p = u.query ? u.query : "", *end = p + u.query_n;
        while (p < end) {
                const char *amp = memchr(p, '&', (size_t)(end - p));
                const char *e = amp ? amp : end;
                if (e > p) {
                        const char *eq = memchr(p, '=', (size_t)(e - p));
                        cel_value k = unescape(c, p, (size_t)((eq ? eq : e) - p));
                        cel_value v = eq ? unescape(c, eq + 1, (size_t)(e - eq - 1)) : cel_str("", 0);
                        if (cel_is_err(k)) return k;
                        if (cel_is_err(v)) return v;
                        const cel_value *cur = cel_map_get(m, k);
                        if (cur) {
                                if (cel_list_push(c, (cel_list *)cur->l, v) < 0) return cel_oom(c);
                        } else {
                                cel_list *l = cel_list_new(c, 1);
                                if (!l || cel_list_push(c, l, v) < 0 || cel_map_put(c, m, k, cel_list_value(l)) < 0)
                                        return cel_oom(c);
                        }
                }
                p = amp ? amp + 1 : end;
        }
        return cel_map_value(m);
}

#define N(fn, id, member, sig, impl) {fn, id, member, 0, sig, impl, COST_ONE, CEL_LIB_K8S}
const cel_overload cel_net_overloads[] = {
        N("ip", "string_to_ip", false, "string->IP", ip_fn),
        N("isIP", "is_ip", false, "string->bool", is_ip),
        N("ip.isCanonical", "ip_is_canonical", false, "string->bool", ip_is_canonical),
        N("family", "ip_family", true, "IP->int", ip_family),
        N("isUnspecified", "ip_is_unspecified", true, "IP->bool", ip_is_unspecified),
        N("isLoopback", "ip_is_loopback", true, "IP->bool", ip_is_loopback),
        N("isLinkLocalMulticast", "ip_is_link_local_multicast", true, "IP->bool", ip_is_ll_multicast),
        N("isLinkLocalUnicast", "ip_is_link_local_unicast", true, "IP->bool", ip_is_ll_unicast),
        N("isGlobalUnicast", "ip_is_global_unicast", true, "IP->bool", ip_is_global_unicast),
        N("string", "ip_to_string", false, "IP->string", net_to_string),
        N("cidr", "string_to_cidr", false, "string->CIDR", cidr_fn),
        N("isCIDR", "is_cidr", false, "string->bool", is_cidr),
        N("containsIP", "cidr_contains_ip_ip", true, "CIDR,IP->bool", cidr_contains_ip),
        N("containsIP", "cidr_contains_ip_string", true, "CIDR,string->bool", cidr_contains_ip),
        N("containsCIDR", "cidr_contains_cidr", true, "CIDR,CIDR->bool", cidr_contains_cidr),
        N("containsCIDR", "cidr_contains_cidr_string", true, "CIDR,string->bool", cidr_contains_cidr),
        N("ip", "cidr_ip", true, "CIDR->IP", cidr_ip),
        N("masked", "cidr_masked", true, "CIDR->CIDR", cidr_masked),
        N("prefixLength", "cidr_prefix_length", true, "CIDR->int", cidr_prefix),
        N("string", "cidr_to_string", false, "CIDR->string", net_to_string),
        N("url", "string_to_url", false, "string->URL", url_fn),
        N("isURL", "is_url_string", false, "string->bool", is_url),
        N("getScheme", "url_get_scheme", true, "URL->string", url_scheme),
        N("getHost", "url_get_host", true, "URL->string", url_host),
        N("getHostname", "url_get_hostname", true, "URL->string", url_hostname),
        N("getPort", "url_get_port", true, "URL->string", url_port),
        N("getEscapedPath", "url_get_escaped_path", true, "URL->string", url_path),
        N("getQuery", "url_get_query", true, "URL->map(string,list(string))", url_query),
        {NULL, NULL, false, 0, NULL, NULL, COST_ONE, 0},
};

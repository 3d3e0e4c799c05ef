/* SPDX-License-Identifier: Apache-2.0
 * checkpoint.c — kubelet_internal_checkpoint: JSON exactly as the kubelet
 * writes it, and the go-spew text + FNV-1a-32 checksum it verifies
 * (wire-protocols §5). */
#include <stdio.h>

#include "devices/decode.h"
#include "devices/checkpoint.h"
#include "doc/state-file.h"

uint32_t dp_fnv1a32(const void *data, size_t len) {
        const unsigned char *p = data;
        uint32_t h = 0x811C9DC5u;
        for (size_t i = 0; i < len; i++) {
                h ^= p[i];
                h *= 0x01000193u;
        }
        return h;
}

static void ids_done(dp_ckpt_ids *v) {
        for (size_t i = 0; i < v->n; i++)
                free(v->ids[i]);
        free(v->ids);
}

static void entry_done(dp_ckpt_entry *e) {
        dp_free_many(e->pod_uid, e->container_name, e->resource_name);
        for (size_t i = 0; i < e->n_device_ids; i++)
                ids_done(&e->device_ids[i].ids);
        dp_free_many(e->device_ids, e->alloc_resp);
}

dp_checkpoint *dp_checkpoint_free(dp_checkpoint *c) {
        if (!c) return NULL;
        for (size_t i = 0; i < c->n_entries; i++)
                entry_done(&c->entries[i]);
        free(c->entries);
        for (size_t i = 0; i < c->n_registered; i++) {
                free(c->registered[i].resource_name);
                ids_done(&c->registered[i].ids);
        }
        dp_free_many(c->registered, c->boot_id);
        free(c);
        return NULL;
}

dp_checkpoint *dp_checkpoint_new(void) {
        dp_checkpoint *c = calloc(1, sizeof(*c));
        if (c) c->entries_null = true;
        return c;
}

static int ids_copy(dp_ckpt_ids *v, const char *const *ids, size_t n) {
        v->ids = calloc(n ? n : 1, sizeof(char *));
        if (!v->ids) return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                if (!(v->ids[i] = dp_strdup(ids[i] ? ids[i] : ""))) return -ENOMEM;
                v->n++;
        }
        return 0;
}

static int cmp_numa(const void *a, const void *b) {
        int64_t x = ((const dp_ckpt_numa *)a)->numa, y = ((const dp_ckpt_numa *)b)->numa;
        return x < y ? -1 : x > y;
}

int dp_checkpoint_add_entry(dp_checkpoint *c, const char *pod_uid, const char *container_name,
                            const char *resource_name, const int64_t *numas, const char *const *const *ids_per_numa,
                            const size_t *n_ids_per_numa, size_t n_numas, const uint8_t *alloc_resp,
                            size_t alloc_resp_len) {
        assert_return(c && pod_uid && container_name && resource_name, -EINVAL);
        assert_return(n_numas == 0 || (numas && ids_per_numa && n_ids_per_numa), -EINVAL);
        for (size_t i = 0; i < n_numas; i++)
                for (size_t j = i + 1; j < n_numas; j++)
                        if (numas[i] == numas[j]) return -EINVAL;
        dp_ckpt_entry *ne = realloc(c->entries, (c->n_entries + 1) * sizeof(dp_ckpt_entry));
        if (!ne) return -ENOMEM;
        c->entries = ne;
        dp_ckpt_entry *e = &ne[c->n_entries];
        memset(e, 0, sizeof(*e));
        int r = -ENOMEM;
        e->pod_uid = dp_strdup(pod_uid);
        e->container_name = dp_strdup(container_name);
        e->resource_name = dp_strdup(resource_name);
        e->device_ids = calloc(n_numas ? n_numas : 1, sizeof(dp_ckpt_numa));
        if (!e->pod_uid || !e->container_name || !e->resource_name || !e->device_ids) goto fail;
        for (size_t i = 0; i < n_numas; i++) {
                e->device_ids[i].numa = numas[i];
                e->n_device_ids++;
                if (ids_copy(&e->device_ids[i].ids, ids_per_numa[i], n_ids_per_numa[i]) < 0) goto fail;
        }
        qsort(e->device_ids, e->n_device_ids, sizeof(dp_ckpt_numa), cmp_numa);
        if (alloc_resp) {
                e->alloc_resp = malloc(alloc_resp_len ? alloc_resp_len : 1);
                if (!e->alloc_resp) goto fail;
                if (alloc_resp_len) memcpy(e->alloc_resp, alloc_resp, alloc_resp_len);
                e->alloc_resp_len = alloc_resp_len;
        } else {
                e->alloc_resp_null = true;
        }
        c->n_entries++;
        c->entries_null = false;
        return 0;
fail:
        entry_done(e);
        return r;
}

/* Resource names as map keys: the characters of extended resource names
 * only, at most 317 bytes (253 prefix + '/' + 63). Keeps every key short
 * and unescaped, which the YAML-based reader needs (keys over 1024
 * characters are not read back). */
static bool valid_key(const char *s) {
        size_t n = strlen(s);
        return n > 0 && n <= 317 &&
               strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/") == n;
}

int dp_checkpoint_set_registered(dp_checkpoint *c, const char *resource_name, const char *const *ids, size_t n_ids) {
        assert_return(c && resource_name && (ids || n_ids == 0), -EINVAL);
        if (!valid_key(resource_name)) return -EINVAL;
        size_t i = 0;
        while (i < c->n_registered && strcmp(c->registered[i].resource_name, resource_name) < 0)
                i++;
        dp_ckpt_ids v = {0};
        if (ids_copy(&v, ids, n_ids) < 0) {
                ids_done(&v);
                return -ENOMEM;
        }
        if (i < c->n_registered && streq(c->registered[i].resource_name, resource_name)) {
                ids_done(&c->registered[i].ids);
                c->registered[i].ids = v;
                return 0;
        }
        char *name = dp_strdup(resource_name);
        dp_ckpt_registered *nr = name ? realloc(c->registered, (c->n_registered + 1) * sizeof(*nr)) : NULL;
        if (!nr) {
                free(name);
                ids_done(&v);
                return -ENOMEM;
        }
        c->registered = nr;
        memmove(&nr[i + 1], &nr[i], (c->n_registered - i) * sizeof(*nr));
        nr[i].resource_name = name;
        nr[i].ids = v;
        c->n_registered++;
        c->registered_null = false;
        return 0;
}

/* ---- the go-spew text ---- */

static void put_strlist(dp_strbuf *o, const dp_ckpt_ids *v, bool json);
static void put_registered(dp_strbuf *o, const dp_checkpoint *c, bool json);

int dp_checkpoint_spew(const dp_checkpoint *c, dp_strbuf *o) {
        assert_return(c && o, -EINVAL);
        dp_strbuf_puts(o, "(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)");
        if (c->entries_null && c->n_entries == 0)
                dp_strbuf_puts(o, "<nil>");
        else {
                dp_strbuf_putc(o, '[');
                for (size_t i = 0; i < c->n_entries; i++) {
                        const dp_ckpt_entry *e = &c->entries[i];
                        if (i) dp_strbuf_putc(o, ' ');
                        dp_strbuf_printf(o,
                                         "{PodUID:(string)%s ContainerName:(string)%s ResourceName:(string)%s "
                                         "DeviceIDs:(checkpoint.DevicesPerNUMA)",
                                         e->pod_uid ? e->pod_uid : "", e->container_name ? e->container_name : "",
                                         e->resource_name ? e->resource_name : "");
                        if (e->device_ids_null)
                                dp_strbuf_puts(o, "<nil>");
                        else {
                                dp_strbuf_puts(o, "map[");
                                for (size_t k = 0; k < e->n_device_ids; k++) {
                                        if (k) dp_strbuf_putc(o, ' ');
                                        dp_strbuf_printf(o, "%lld:", (long long)e->device_ids[k].numa);
                                        put_strlist(o, &e->device_ids[k].ids, false);
                                }
                                dp_strbuf_putc(o, ']');
                        }
                        dp_strbuf_puts(o, " AllocResp:([]uint8)");
                        if (e->alloc_resp_null)
                                dp_strbuf_puts(o, "<nil>");
                        else {
                                dp_strbuf_putc(o, '[');
                                for (size_t k = 0; k < e->alloc_resp_len; k++)
                                        dp_strbuf_printf(o, k ? " %u" : "%u", e->alloc_resp[k]);
                                dp_strbuf_putc(o, ']');
                        }
                        dp_strbuf_putc(o, '}');
                }
                dp_strbuf_putc(o, ']');
        }
        dp_strbuf_puts(o, " RegisteredDevices:(map[string][]string)");
        put_registered(o, c, false);
        dp_strbuf_putc(o, '}');
        return dp_strbuf_failed(o) ? -ENOMEM : 0;
}

uint32_t dp_checkpoint_checksum(const dp_checkpoint *c) {
        dp_strbuf sb = DP_STRBUF_INIT;
        uint32_t h = 0;
        if (dp_checkpoint_spew(c, &sb) == 0) h = dp_fnv1a32(sb.buf, sb.len);
        dp_strbuf_done(&sb);
        return h;
}

/* ---- JSON, as Go's encoding/json writes it ---- */

/* Length of a valid UTF-8 sequence at s (max n bytes), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n, uint32_t *ret_cp) {
        unsigned char c = s[0];
        size_t len;
        uint32_t cp, min;
        if (c < 0x80) {
                *ret_cp = c;
                return 1;
        } else if ((c & 0xe0) == 0xc0) {
                len = 2, cp = c & 0x1f, min = 0x80;
        } else if ((c & 0xf0) == 0xe0) {
                len = 3, cp = c & 0x0f, min = 0x800;
        } else if ((c & 0xf8) == 0xf0) {
                len = 4, cp = c & 0x07, min = 0x10000;
        } else
                return 0;
        if (len > n) return 0;
        for (size_t i = 1; i < len; i++) {
                if ((s[i] & 0xc0) != 0x80) return 0;
                cp = (cp << 6) | (s[i] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
        *ret_cp = cp;
        return len;
}

static void json_str(dp_strbuf *o, const char *str) {
        static const char hex[] = "0123456789abcdef";
        const unsigned char *s = (const unsigned char *)str;
        size_t n = strlen(str);
        dp_strbuf_putc(o, '"');
        for (size_t i = 0; i < n;) {
                unsigned char c = s[i];
                if (c < 0x80) {
                        switch (c) {
                        case '"': dp_strbuf_puts(o, "\\\""); break;
                        case '\\': dp_strbuf_puts(o, "\\\\"); break;
                        case '\b': dp_strbuf_puts(o, "\\b"); break;
                        case '\f': dp_strbuf_puts(o, "\\f"); break;
                        case '\n': dp_strbuf_puts(o, "\\n"); break;
                        case '\r': dp_strbuf_puts(o, "\\r"); break;
                        case '\t': dp_strbuf_puts(o, "\\t"); break;
                        default:
                                if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x7f) {
                                        dp_strbuf_puts(o, "\\u00");
                                        dp_strbuf_putc(o, hex[c >> 4]);
                                        dp_strbuf_putc(o, hex[c & 15]);
                                } else
                                        dp_strbuf_putc(o, (char)c);
                        }
                        i++;
                        continue;
                }
                uint32_t cp;
                size_t l = utf8_len(s + i, n - i, &cp);
                if (l == 0) {
                        dp_strbuf_puts(o, "\\ufffd");
                        i++;
                } else if (cp == 0x2028 || cp == 0x2029 || (cp >= 0x80 && cp <= 0x9f) || cp == 0xfeff || cp == 0xfffe ||
                           cp == 0xffff) {
                        /* Go escapes U+2028/2029; the others it writes raw, but a
                         * YAML reader (ours) refuses or folds them raw, so they are
                         * escaped too: the same string once decoded. */
                        dp_strbuf_printf(o, "\\u%04x", (unsigned)cp);
                        i += l;
                } else {
                        dp_strbuf_append(o, str + i, l);
                        i += l;
                }
        }
        dp_strbuf_putc(o, '"');
}

/* A device-ID list as go-spew prints it ([a b], <nil>) or as JSON. */
static void put_strlist(dp_strbuf *o, const dp_ckpt_ids *v, bool json) {
        if (v->null) {
                dp_strbuf_puts(o, json ? "null" : "<nil>");
                return;
        }
        dp_strbuf_putc(o, '[');
        for (size_t i = 0; i < v->n; i++) {
                if (i) dp_strbuf_putc(o, json ? ',' : ' ');
                if (json)
                        json_str(o, v->ids[i]);
                else
                        dp_strbuf_puts(o, v->ids[i]);
        }
        dp_strbuf_putc(o, ']');
}

/* RegisteredDevices as go-spew prints it (map[a:[x y] b:[z]], <nil>) or as
 * JSON ({"a":["x","y"]}, null). */
static void put_registered(dp_strbuf *o, const dp_checkpoint *c, bool json) {
        if (c->registered_null && c->n_registered == 0) {
                dp_strbuf_puts(o, json ? "null" : "<nil>");
                return;
        }
        dp_strbuf_puts(o, json ? "{" : "map[");
        for (size_t i = 0; i < c->n_registered; i++) {
                if (i) dp_strbuf_putc(o, json ? ',' : ' ');
                if (json)
                        json_str(o, c->registered[i].resource_name);
                else
                        dp_strbuf_puts(o, c->registered[i].resource_name);
                dp_strbuf_putc(o, ':');
                put_strlist(o, &c->registered[i].ids, json);
        }
        dp_strbuf_putc(o, json ? '}' : ']');
}

static void base64(dp_strbuf *o, const uint8_t *p, size_t n) {
        static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        for (size_t i = 0; i < n; i += 3) {
                uint32_t v = (uint32_t)p[i] << 16;
                if (i + 1 < n) v |= (uint32_t)p[i + 1] << 8;
                if (i + 2 < n) v |= p[i + 2];
                dp_strbuf_putc(o, tab[(v >> 18) & 63]);
                dp_strbuf_putc(o, tab[(v >> 12) & 63]);
                dp_strbuf_putc(o, i + 1 < n ? tab[(v >> 6) & 63] : '=');
                dp_strbuf_putc(o, i + 2 < n ? tab[v & 63] : '=');
        }
}

static int cmp_numa_text(const void *a, const void *b) {
        char x[24], y[24];
        dp_pathf(x, sizeof x, "%lld", (long long)(*(const dp_ckpt_numa *const *)a)->numa);
        dp_pathf(y, sizeof y, "%lld", (long long)(*(const dp_ckpt_numa *const *)b)->numa);
        return strcmp(x, y);
}

int dp_checkpoint_encode(dp_checkpoint *c, dp_strbuf *o) {
        assert_return(c && o, -EINVAL);
        dp_strbuf_puts(o, "{\"Data\":{\"PodDeviceEntries\":");
        if (c->entries_null && c->n_entries == 0)
                dp_strbuf_puts(o, "null");
        else {
                dp_strbuf_putc(o, '[');
                for (size_t i = 0; i < c->n_entries; i++) {
                        const dp_ckpt_entry *e = &c->entries[i];
                        if (i) dp_strbuf_putc(o, ',');
                        dp_strbuf_puts(o, "{\"PodUID\":");
                        json_str(o, e->pod_uid ? e->pod_uid : "");
                        dp_strbuf_puts(o, ",\"ContainerName\":");
                        json_str(o, e->container_name ? e->container_name : "");
                        dp_strbuf_puts(o, ",\"ResourceName\":");
                        json_str(o, e->resource_name ? e->resource_name : "");
                        dp_strbuf_puts(o, ",\"DeviceIDs\":");
                        if (e->device_ids_null)
                                dp_strbuf_puts(o, "null");
                        else {
                                /* Go sorts map keys by their text: "-1" < "0" < "10" < "2". */
                                const dp_ckpt_numa **order =
                                        calloc(e->n_device_ids ? e->n_device_ids : 1, sizeof(*order));
                                if (!order) return -ENOMEM;
                                for (size_t k = 0; k < e->n_device_ids; k++)
                                        order[k] = &e->device_ids[k];
                                qsort(order, e->n_device_ids, sizeof(*order), cmp_numa_text);
                                dp_strbuf_putc(o, '{');
                                for (size_t k = 0; k < e->n_device_ids; k++) {
                                        dp_strbuf_printf(o, "%s\"%lld\":", k ? "," : "", (long long)order[k]->numa);
                                        put_strlist(o, &order[k]->ids, true);
                                }
                                dp_strbuf_putc(o, '}');
                                free(order);
                        }
                        dp_strbuf_puts(o, ",\"AllocResp\":");
                        if (e->alloc_resp_null)
                                dp_strbuf_puts(o, "null");
                        else {
                                dp_strbuf_putc(o, '"');
                                base64(o, e->alloc_resp, e->alloc_resp_len);
                                dp_strbuf_putc(o, '"');
                        }
                        dp_strbuf_putc(o, '}');
                }
                dp_strbuf_putc(o, ']');
        }
        dp_strbuf_puts(o, ",\"RegisteredDevices\":");
        put_registered(o, c, true);
        c->checksum = dp_checkpoint_checksum(c);
        dp_strbuf_printf(o, "},\"Checksum\":%u", c->checksum);
        if (c->boot_id && *c->boot_id) {
                dp_strbuf_puts(o, ",\"BootID\":");
                json_str(o, c->boot_id);
        }
        dp_strbuf_putc(o, '}');
        return dp_strbuf_failed(o) ? -ENOMEM : 0;
}

/* ---- decoding ---- */

static int b64val(unsigned char c) {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        if (c == '+') return 62;
        if (c == '/') return 63;
        return -1;
}

/* Standard base64 with padding; '\r' and '\n' are skipped as Go does. */
static int unbase64(const char *s, size_t n, uint8_t **ret, size_t *ret_len) {
        _cleanup_free_ char *clean = malloc(n + 1);
        if (!clean) return -ENOMEM;
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
                if (s[i] != '\r' && s[i] != '\n') clean[m++] = s[i];
        if (m % 4) return -EINVAL;
        uint8_t *out = malloc(m / 4 * 3 + 1);
        if (!out) return -ENOMEM;
        size_t k = 0;
        for (size_t i = 0; i < m; i += 4) {
                int v[4];
                size_t pad = 0;
                for (size_t j = 0; j < 4; j++) {
                        unsigned char ch = (unsigned char)clean[i + j];
                        if (ch == '=' && i + 4 == m && j >= 2) {
                                v[j] = 0;
                                pad++;
                                continue;
                        }
                        if (pad || (v[j] = b64val(ch)) < 0) {
                                free(out);
                                return -EINVAL;
                        }
                }
                uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
                out[k++] = (uint8_t)(w >> 16);
                if (pad < 2) out[k++] = (uint8_t)(w >> 8);
                if (pad < 1) out[k++] = (uint8_t)w;
        }
        *ret = out;
        *ret_len = k;
        return 0;
}

static int bad(dp_error *err, const char *path, const char *rule) {
        return dp_error_set(err, -EINVAL, "checkpoint: %s: %s", path, rule);
}

/* A JSON string, or null -> "" (Go leaves a string untouched on null). */
static int get_string(const dp_doc_node *n, const char *path, char **ret, dp_error *err) {
        const char *s = "";
        if (n && !dp_doc_is_null(n)) {
                if (n->type != DP_DOC_SCALAR || n->plain) return bad(err, path, "expected a string");
                if (memchr(n->str, 0, n->len)) return bad(err, path, "string contains a NUL byte");
                s = n->str;
        }
        *ret = dp_strdup(s);
        return *ret ? 0 : dp_error_set(err, -ENOMEM, "out of memory");
}

static int get_strlist(const dp_doc_node *n, const char *path, dp_ckpt_ids *v, dp_error *err) {
        if (dp_doc_is_null(n)) {
                v->null = true;
                return 0;
        }
        if (n->type != DP_DOC_SEQ) return bad(err, path, "expected a list of strings");
        v->ids = calloc(n->n ? n->n : 1, sizeof(char *));
        if (!v->ids) return dp_error_set(err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < n->n; i++) {
                int r = get_string(n->items[i], path, &v->ids[i], err);
                if (r < 0) return r;
                v->n++;
        }
        return 0;
}

static int decode_entry(const dp_doc_node *n, size_t idx, dp_ckpt_entry *e, dp_error *err) {
        char path[96];
        dp_pathf(path, sizeof path, "Data.PodDeviceEntries[%zu]", idx);
        if (dp_doc_is_null(n)) {
                e->device_ids_null = e->alloc_resp_null = true;
                e->pod_uid = dp_strdup("");
                e->container_name = dp_strdup("");
                e->resource_name = dp_strdup("");
                return e->pod_uid && e->container_name && e->resource_name
                               ? 0
                               : dp_error_set(err, -ENOMEM, "out of memory");
        }
        if (n->type != DP_DOC_MAP) return bad(err, path, "expected an object");
        char p[160];
        int r;
        dp_pathf(p, sizeof p, "%s.PodUID", path);
        if ((r = get_string(dp_doc_get(n, "PodUID"), p, &e->pod_uid, err)) < 0) return r;
        dp_pathf(p, sizeof p, "%s.ContainerName", path);
        if ((r = get_string(dp_doc_get(n, "ContainerName"), p, &e->container_name, err)) < 0) return r;
        dp_pathf(p, sizeof p, "%s.ResourceName", path);
        if ((r = get_string(dp_doc_get(n, "ResourceName"), p, &e->resource_name, err)) < 0) return r;
        const dp_doc_node *d = dp_doc_get(n, "DeviceIDs");
        dp_pathf(p, sizeof p, "%s.DeviceIDs", path);
        if (dp_doc_is_null(d))
                e->device_ids_null = true;
        else if (d->type == DP_DOC_SEQ)
                return bad(err, p, "the list form of kubelet <= 1.19 is not supported (kubelet 1.30 dropped it too)");
        else if (d->type != DP_DOC_MAP)
                return bad(err, p, "expected an object of NUMA node -> device ids");
        else {
                e->device_ids = calloc(d->n ? d->n : 1, sizeof(dp_ckpt_numa));
                if (!e->device_ids) return dp_error_set(err, -ENOMEM, "out of memory");
                for (size_t i = 0; i < d->n; i++) {
                        const char *k = d->pairs[i].key;
                        char *end;
                        errno = 0;
                        long long v = strtoll(k, &end, 10);
                        char kp[240];
                        dp_pathf(kp, sizeof kp, "%s[\"%.32s\"]", p, k);
                        if (!*k || *k == ' ' || *k == '\t' || *k == '\n' || *k == '\r' || *k == '\f' || *k == '\v' ||
                            *end || errno == ERANGE)
                                return bad(err, kp, "NUMA node keys must be 64-bit integers");
                        for (size_t j = 0; j < e->n_device_ids; j++)
                                if (e->device_ids[j].numa == v) return bad(err, kp, "NUMA node given twice");
                        dp_ckpt_numa *nm = &e->device_ids[e->n_device_ids++];
                        nm->numa = v;
                        if ((r = get_strlist(d->pairs[i].value, kp, &nm->ids, err)) < 0) return r;
                }
                qsort(e->device_ids, e->n_device_ids, sizeof(dp_ckpt_numa), cmp_numa);
        }
        const dp_doc_node *a = dp_doc_get(n, "AllocResp");
        dp_pathf(p, sizeof p, "%s.AllocResp", path);
        if (dp_doc_is_null(a))
                e->alloc_resp_null = true;
        else {
                if (a->type != DP_DOC_SCALAR || a->plain) return bad(err, p, "expected a base64 string");
                r = unbase64(a->str, a->len, &e->alloc_resp, &e->alloc_resp_len);
                if (r == -ENOMEM) return dp_error_set(err, r, "out of memory");
                if (r < 0) return bad(err, p, "not valid standard base64");
        }
        return 0;
}

static int decode_data(const dp_doc_node *data, dp_checkpoint *c, dp_error *err) {
        /* What the kubelet decodes into starts with an empty (non-nil) slice
         * and map, so absent keys stay empty, not null. */
        if (dp_doc_is_null(data)) return 0;
        if (data->type != DP_DOC_MAP) return bad(err, "Data", "expected an object");
        const dp_doc_node *es = dp_doc_get(data, "PodDeviceEntries");
        if (es && dp_doc_is_null(es))
                c->entries_null = true;
        else if (es) {
                if (es->type != DP_DOC_SEQ) return bad(err, "Data.PodDeviceEntries", "expected a list");
                c->entries = calloc(es->n ? es->n : 1, sizeof(dp_ckpt_entry));
                if (!c->entries) return dp_error_set(err, -ENOMEM, "out of memory");
                for (size_t i = 0; i < es->n; i++) {
                        int r = decode_entry(es->items[i], i, &c->entries[c->n_entries++], err);
                        if (r < 0) return r;
                }
        }
        const dp_doc_node *rd = dp_doc_get(data, "RegisteredDevices");
        if (rd && dp_doc_is_null(rd))
                c->registered_null = true;
        else if (rd) {
                if (rd->type != DP_DOC_MAP) return bad(err, "Data.RegisteredDevices", "expected an object");
                for (size_t i = 0; i < rd->n; i++) {
                        char p[320];
                        dp_pathf(p, sizeof p, "Data.RegisteredDevices[\"%.253s\"]", rd->pairs[i].key);
                        if (!valid_key(rd->pairs[i].key))
                                return bad(err, p,
                                           "not an extended resource name ([A-Za-z0-9._/-], at most 317 bytes)");
                        dp_ckpt_ids v = {0};
                        int r = get_strlist(rd->pairs[i].value, p, &v, err);
                        if (r >= 0) {
                                r = dp_checkpoint_set_registered(c, rd->pairs[i].key, NULL, 0);
                                if (r < 0) dp_error_set(err, r, "out of memory");
                        }
                        if (r < 0) {
                                ids_done(&v);
                                return r;
                        }
                        for (size_t k = 0; k < c->n_registered; k++)
                                if (streq(c->registered[k].resource_name, rd->pairs[i].key)) {
                                        ids_done(&c->registered[k].ids);
                                        c->registered[k].ids = v;
                                }
                }
        }
        return 0;
}

static int decode(const char *buf, size_t len, bool verify, dp_checkpoint **ret, dp_error *err) {
        assert_return(ret && (buf || len == 0), -EINVAL);
        if (len > DP_CHECKPOINT_MAX_INPUT)
                return dp_error_set(err, -E2BIG, "checkpoint: larger than %u bytes", DP_CHECKPOINT_MAX_INPUT);
        _cleanup_(dp_doc_set_freep) dp_doc_set *ds = dp_doc_set_new();
        if (!ds) return dp_error_set(err, -ENOMEM, "out of memory");
        int r = dp_doc_parse(ds, buf ? buf : "", len, "checkpoint", err);
        if (r < 0) return r == -ENOMEM ? r : dp_error_prefix(err, "corrupt checkpoint");
        const dp_doc_node *root = dp_doc_root(ds, 0);
        if (dp_doc_count(ds) != 1 || !root || root->type != DP_DOC_MAP)
                return dp_error_set(err, -EINVAL, "corrupt checkpoint: expected one JSON object");
        _cleanup_(dp_checkpoint_freep) dp_checkpoint *c = calloc(1, sizeof(*c));
        if (!c) return dp_error_set(err, -ENOMEM, "out of memory");
        if ((r = decode_data(dp_doc_get(root, "Data"), c, err)) < 0) return r;
        const dp_doc_node *ck = dp_doc_get(root, "Checksum");
        uint64_t stored = 0;
        if (ck && !dp_doc_is_null(ck)) {
                if (ck->type != DP_DOC_SCALAR || !ck->plain || ck->str[0] < '0' || ck->str[0] > '9')
                        return bad(err, "Checksum", "expected an unsigned integer");
                char *end;
                errno = 0;
                unsigned long long v = strtoull(ck->str, &end, 10);
                if (*end || errno == ERANGE) return bad(err, "Checksum", "expected a 64-bit unsigned integer");
                stored = v;
        }
        const dp_doc_node *b = dp_doc_get(root, "BootID");
        if (b && !dp_doc_is_null(b) && (r = get_string(b, "BootID", &c->boot_id, err)) < 0) return r;
        uint32_t actual = dp_checkpoint_checksum(c);
        if (!verify) {
                c->checksum = (uint32_t)stored;
                *ret = TAKE_PTR(c);
                return 0;
        }
        if (stored != actual)
                return dp_error_set(err, -EBADMSG,
                                    "corrupt checkpoint: checksum mismatch: file says %llu, content hashes to %u",
                                    (unsigned long long)stored, actual);
        c->checksum = actual;
        *ret = TAKE_PTR(c);
        return 0;
}

int dp_checkpoint_decode(const char *buf, size_t len, dp_checkpoint **ret, dp_error *err) {
        return decode(buf, len, true, ret, err);
}

int dp_checkpoint_decode_unverified(const char *buf, size_t len, dp_checkpoint **ret, dp_error *err) {
        return decode(buf, len, false, ret, err);
}

/* ---- the file type (doc/state-file.h) ---- */

/* Marshalling refreshes the checksum field, as the kubelet's
 * MarshalCheckpoint does: the object is the caller's to change. */
static int marshal(const void *obj, dp_strbuf *out) { return dp_checkpoint_encode((dp_checkpoint *)obj, out); }

static int unmarshal(const char *buf, size_t len, const char *source, void **ret, dp_error *err) {
        return dp_checkpoint_decode(buf, len, (dp_checkpoint **)ret, err);
}

const dp_state_file_type dp_checkpoint_file = {"checkpoint", DP_CHECKPOINT_MAX_INPUT, marshal, unmarshal};

/* SPDX-License-Identifier: Apache-2.0
 * health.c — the `<state-dir>/health` override file: parse, apply, rewrite. */
#include "devices/decode.h"
#include "devices/health.h"

dp_health_file *dp_health_file_free(dp_health_file *f) {
        if (!f) return NULL;
        for (size_t i = 0; i < f->n; i++)
                free(f->items[i].id);
        free(f->items);
        free(f);
        return NULL;
}

static bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

/* Split one line into at most 3 words; returns the word count (3 = too many). */
static size_t split(const char *line, size_t len, const char **w, size_t *wl) {
        size_t n = 0, i = 0;
        while (i < len) {
                while (i < len && is_blank(line[i]))
                        i++;
                if (i >= len || line[i] == '#') break;
                if (n == 3) return 3;
                w[n] = line + i;
                while (i < len && !is_blank(line[i]) && line[i] != '#')
                        i++;
                wl[n] = (size_t)(line + i - w[n]);
                n++;
        }
        return n;
}

int dp_health_file_parse(const char *buf, size_t len, const char *source, dp_health_file **ret, dp_error *err) {
        assert_return(ret && (buf || len == 0), -EINVAL);
        if (!source) source = DP_HEALTH_FILE_NAME;
        if (len > DP_HEALTH_FILE_MAX)
                return dp_error_set(err, -E2BIG, "%s: larger than %u bytes", source, DP_HEALTH_FILE_MAX);
        _cleanup_(dp_health_file_freep) dp_health_file *f = calloc(1, sizeof(*f));
        if (!f) return dp_error_set(err, -ENOMEM, "out of memory");
        size_t cap = 0;
        unsigned lineno = 0;
        for (size_t pos = 0; pos < len;) {
                const char *line = buf + pos;
                const char *nl = memchr(line, '\n', len - pos);
                size_t ll = nl ? (size_t)(nl - line) : len - pos;
                pos += ll + (nl ? 1 : 0);
                lineno++;
                if (memchr(line, 0, ll)) return dp_error_set(err, -EINVAL, "%s:%u: NUL byte", source, lineno);
                const char *w[3];
                size_t wl[3];
                size_t n = split(line, ll, w, wl);
                if (n == 0) continue;
                if (n != 2)
                        return dp_error_set(err, -EINVAL,
                                            "%s:%u: expected \"<device> healthy|unhealthy\", got %zu word%s", source,
                                            lineno, n, n == 1 ? "" : "s or more");
                dp_health h;
                if (wl[1] == 7 && !memcmp(w[1], "healthy", 7))
                        h = DP_HEALTH_HEALTHY;
                else if (wl[1] == 9 && !memcmp(w[1], "unhealthy", 9))
                        h = DP_HEALTH_UNHEALTHY;
                else
                        return dp_error_set(err, -EINVAL, "%s:%u: health must be healthy or unhealthy, got \"%.*s\"",
                                            source, lineno, (int)DP_MIN(wl[1], 64), w[1]);
                if (wl[0] > 253)
                        return dp_error_set(err, -EINVAL, "%s:%u: device id longer than 253 characters", source,
                                            lineno);
                if (f->n >= DP_HEALTH_FILE_LINES_MAX)
                        return dp_error_set(err, -E2BIG, "%s:%u: more than %d overrides", source, lineno,
                                            DP_HEALTH_FILE_LINES_MAX);
                if (DP_GROW(f->items, cap, f->n + 1) < 0) return dp_error_set(err, -ENOMEM, "out of memory");
                dp_health_override *o = &f->items[f->n];
                o->id = dp_strndup(w[0], wl[0]);
                if (!o->id) return dp_error_set(err, -ENOMEM, "out of memory");
                o->health = h;
                o->line = lineno;
                f->n++;
        }
        *ret = TAKE_PTR(f);
        return 0;
}

int dp_health_apply(dp_device_set *s, const dp_health_file *f, const char *source, dp_error *err) {
        assert_return(s, -EINVAL);
        if (!source) source = DP_HEALTH_FILE_NAME;
        /* Check every id before touching the set, so a bad file changes nothing. */
        for (size_t i = 0; f && i < f->n; i++)
                if (!dp_device_set_find(s, f->items[i].id) && !dp_device_set_find_mig(s, f->items[i].id))
                        return dp_error_set(err, -ENOENT, "%s:%u: unknown device %s", source, f->items[i].line,
                                            f->items[i].id);
        int changed = 0;
        for (size_t i = 0; i < s->n_devices; i++) {
                dp_hw_device *d = &s->devices[i];
                dp_health h = d->profile_health;
                for (size_t k = 0; f && k < f->n; k++)
                        if (streq(f->items[k].id, d->id) || streq_ptr(f->items[k].id, d->uuid)) h = f->items[k].health;
                changed += h != d->health;
                d->health = h;
                for (size_t j = 0; j < d->n_migs; j++) {
                        dp_mig_device *m = &d->migs[j];
                        dp_health mh = m->profile_health;
                        for (size_t k = 0; f && k < f->n; k++)
                                if (dp_mig_named(s, m, f->items[k].id)) mh = f->items[k].health;
                        changed += mh != m->health;
                        m->health = mh;
                }
        }
        return changed;
}

int dp_health_file_set(const char *old, size_t old_len, const char *id, dp_health health, dp_strbuf *out,
                       dp_error *err) {
        assert_return(id && out && (old || old_len == 0), -EINVAL);
        size_t idl = strlen(id);
        if (idl == 0 || idl > 253 || strpbrk(id, " \t\r\n#"))
                return dp_error_set(err, -EINVAL, "device id must be one word without blanks or '#'");
        for (size_t pos = 0; pos < old_len;) {
                const char *line = old + pos;
                const char *nl = memchr(line, '\n', old_len - pos);
                size_t ll = nl ? (size_t)(nl - line) : old_len - pos;
                pos += ll + (nl ? 1 : 0);
                const char *w[3];
                size_t wl[3];
                size_t n = split(line, ll, w, wl);
                if (n >= 1 && wl[0] == idl && !memcmp(w[0], id, idl)) continue;
                dp_strbuf_append(out, line, ll);
                dp_strbuf_putc(out, '\n');
        }
        dp_strbuf_printf(out, "%s %s\n", id, health == DP_HEALTH_HEALTHY ? "healthy" : "unhealthy");
        if (dp_strbuf_failed(out)) return dp_error_set(err, -ENOMEM, "out of memory");
        return 0;
}

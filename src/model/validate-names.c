/* SPDX-License-Identifier: Apache-2.0
 *
 * validate-names.c — Kubernetes name rules (apimachinery validation and the
 * resource.k8s.io qualified names), each failing with the rule's wording.
 */
#include "model/model.h"
#include "model/validate.h"

static bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
static bool is_alnum(char c) { return is_lower_alnum(c) || (c >= 'A' && c <= 'Z'); }

/* [a-z0-9]([-a-z0-9]*[a-z0-9])? over s[0..n) */
static bool dns_label_chars(const char *s, size_t n) {
        if (n == 0 || !is_lower_alnum(s[0]) || !is_lower_alnum(s[n - 1])) return false;
        for (size_t i = 0; i < n; i++)
                if (!is_lower_alnum(s[i]) && s[i] != '-') return false;
        return true;
}

static bool dns_subdomain_chars(const char *s, size_t n) {
        if (n == 0) return false;
        size_t start = 0;
        for (size_t i = 0; i <= n; i++)
                if (i == n || s[i] == '.') {
                        if (!dns_label_chars(s + start, i - start)) return false;
                        start = i + 1;
                }
        return true;
}

/* s is not empty, at most max long and made of chars() (why: what chars() wants). */
static int validate_dns(const char *s, size_t max, bool (*chars)(const char *s, size_t n), const char *why,
                        dp_error *err) {
        size_t n = s ? strlen(s) : 0;
        if (n == 0) return dp_error_set(err, -EINVAL, "must not be empty");
        if (n > max) return dp_error_set(err, -EINVAL, "\"%.80s...\": must be no more than %zu characters", s, max);
        if (!chars(s, n)) return dp_error_set(err, -EINVAL, "\"%.80s\": %s", s, why);
        return 0;
}

int dp_validate_dns_label(const char *s, dp_error *err) {
        return validate_dns(s, DP_DNS1123_LABEL_MAX_LENGTH, dns_label_chars,
                            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                            "and must start and end with an alphanumeric character",
                            err);
}

int dp_validate_dns_subdomain(const char *s, dp_error *err) {
        return validate_dns(s, DP_DNS1123_SUBDOMAIN_MAX_LENGTH, dns_subdomain_chars,
                            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
                            "or '.', and must start and end with an alphanumeric character",
                            err);
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], 1..63 */
static bool qualified_part(const char *s, size_t n) {
        if (n == 0 || n > DP_QUALIFIED_NAME_MAX_LENGTH || !is_alnum(s[0]) || !is_alnum(s[n - 1])) return false;
        for (size_t i = 0; i < n; i++)
                if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.') return false;
        return true;
}

int dp_validate_qualified_name(const char *s, dp_error *err) {
        if (!s || !*s) return dp_error_set(err, -EINVAL, "name part must be non-empty");
        const char *slash = strchr(s, '/');
        const char *name = s;
        if (slash) {
                if (strchr(slash + 1, '/'))
                        return dp_error_set(err, -EINVAL,
                                            "\"%.80s\": a qualified name must consist of an optional DNS subdomain "
                                            "prefix and a name, separated by one '/'",
                                            s);
                size_t pl = (size_t)(slash - s);
                if (pl == 0) return dp_error_set(err, -EINVAL, "\"%.80s\": prefix part must be non-empty", s);
                if (pl > DP_DNS1123_SUBDOMAIN_MAX_LENGTH || !dns_subdomain_chars(s, pl))
                        return dp_error_set(err, -EINVAL,
                                            "\"%.80s\": prefix part must be a lowercase RFC 1123 subdomain", s);
                name = slash + 1;
        }
        if (!qualified_part(name, strlen(name)))
                return dp_error_set(err, -EINVAL,
                                    "\"%.80s\": name part must consist of alphanumeric characters, '-', '_' or '.', "
                                    "must start and end with an alphanumeric character and be at most %d "
                                    "characters",
                                    s, DP_QUALIFIED_NAME_MAX_LENGTH);
        return 0;
}

int dp_validate_label_value(const char *s, dp_error *err) {
        size_t n = s ? strlen(s) : 0;
        if (n == 0) return 0;
        if (n > DP_LABEL_VALUE_MAX_LENGTH || !qualified_part(s, n))
                return dp_error_set(err, -EINVAL,
                                    "\"%.80s\": a valid label value must be an empty string or consist of "
                                    "alphanumeric characters, '-', '_' or '.', start and end with an alphanumeric "
                                    "character, and be at most %d characters",
                                    s, DP_LABEL_VALUE_MAX_LENGTH);
        return 0;
}

static bool c_identifier(const char *s, size_t n) {
        if (n == 0) return false;
        if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_')) return false;
        for (size_t i = 1; i < n; i++)
                if (!is_alnum(s[i]) && s[i] != '_') return false;
        return true;
}

static int device_name(const char *s, bool domain_required, dp_error *err) {
        if (!s || !*s) return dp_error_set(err, -EINVAL, "must not be empty");
        const char *slash = strchr(s, '/');
        const char *id = s;
        if (slash) {
                size_t dl = (size_t)(slash - s);
                if (dl == 0 || !dns_subdomain_chars(s, dl))
                        return dp_error_set(err, -EINVAL, "\"%.80s\": the domain must be a DNS subdomain", s);
                if (dl > DP_DEVICE_MAX_DOMAIN_LENGTH)
                        return dp_error_set(err, -EINVAL,
                                            "\"%.80s\": the domain must be at most %d characters "
                                            "(DeviceMaxDomainLength)",
                                            s, DP_DEVICE_MAX_DOMAIN_LENGTH);
                id = slash + 1;
        } else if (domain_required) {
                return dp_error_set(err, -EINVAL, "\"%.80s\": must be a fully qualified name (domain/name)", s);
        }
        size_t il = strlen(id);
        if (!c_identifier(id, il))
                return dp_error_set(err, -EINVAL,
                                    "\"%.80s\": the name must be a C identifier (letters, digits and '_', not "
                                    "starting with a digit)",
                                    s);
        if (il > DP_DEVICE_MAX_ID_LENGTH)
                return dp_error_set(err, -EINVAL,
                                    "\"%.80s\": the name must be at most %d characters (DeviceMaxIDLength)", s,
                                    DP_DEVICE_MAX_ID_LENGTH);
        return 0;
}

int dp_validate_device_qualified_name(const char *s, dp_error *err) { return device_name(s, false, err); }
int dp_validate_device_full_qualified_name(const char *s, dp_error *err) { return device_name(s, true, err); }

/* deviceclass.resource.kubernetes.io/<DeviceClass name> */
static bool device_class_resource(const char *s) {
        if (!startswith(s, DP_RESOURCE_DEVICE_CLASS_PREFIX)) return false;
        const char *cls = s + strlen(DP_RESOURCE_DEVICE_CLASS_PREFIX);
        size_t n = strlen(cls);
        return n <= DP_QUALIFIED_NAME_MAX_LENGTH && dns_subdomain_chars(cls, n);
}

bool dp_is_extended_resource_name(const char *s) {
        if (s && device_class_resource(s)) return true;
        if (!s || !strchr(s, '/') || strstr(s, "kubernetes.io/") || startswith(s, "requests.")) return false;
        char buf[512];
        if (strlen(s) > sizeof(buf) - 10) return false;
        snprintf(buf, sizeof(buf), "requests.%s", s);
        return dp_validate_qualified_name(buf, NULL) == 0;
}

int dp_validate_extended_resource_name(const char *s, dp_error *err) {
        if (!s || !*s) return dp_error_set(err, -EINVAL, "must not be empty");
        if (!strchr(s, '/'))
                return dp_error_set(err, -EINVAL, "\"%.80s\": an extended resource name must have the form domain/name",
                                    s);
        if (strstr(s, "kubernetes.io/"))
                return dp_error_set(err, -EINVAL,
                                    "\"%.80s\": the kubernetes.io domain is reserved for native resources", s);
        if (!dp_is_extended_resource_name(s)) {
                int r = dp_validate_qualified_name(s, err);
                if (r < 0) return r;
                return dp_error_set(err, -EINVAL, "\"%.80s\": not a valid extended resource name", s);
        }
        return 0;
}

int dp_validate_container_resource_name(const char *s, dp_error *err) {
        if (!s || !*s) return dp_error_set(err, -EINVAL, "must not be empty");
        if (streq(s, "cpu") || streq(s, "memory") || streq(s, "ephemeral-storage")) return 0;
        if (startswith(s, "hugepages-")) {
                dp_quantity q;
                if (dp_quantity_parse(s + strlen("hugepages-"), &q, NULL) < 0 || q.nanos <= 0)
                        return dp_error_set(err, -EINVAL, "\"%.80s\": hugepages size must be a positive quantity", s);
                return 0;
        }
        if (device_class_resource(s)) return 0;
        if (!strchr(s, '/'))
                return dp_error_set(err, -EINVAL,
                                    "\"%.80s\": must be a standard resource for containers (cpu, memory, "
                                    "ephemeral-storage, hugepages-<size>) or an extended resource of the form "
                                    "domain/name",
                                    s);
        return dp_validate_extended_resource_name(s, err);
}

/* SPDX-License-Identifier: Apache-2.0
 * Quantity vectors: input -> canonical form, as Kubernetes' Quantity.String()
 * prints them after ParseQuantity (facts checked against apimachinery). */
#include <stdio.h>

#include "harness.h"
#include "model/quantity.h"

static const struct {
        const char *in, *canonical;
} canon[] = {
        /* zero in every spelling */
        {"0", "0"},
        {"00", "0"},
        {"-0", "0"},
        {"+0", "0"},
        {"0.0", "0"},
        {"0k", "0"},
        {"0Ki", "0"},
        {"0e5", "0"},
        {".", "0"},
        {"-", "0"},
        {"+", "0"},
        {"0.", "0"},
        {"0n", "0"},
        /* plain integers and decimal SI */
        {"1", "1"},
        {"01", "1"},
        {"+1", "1"},
        {"12345", "12345"},
        {"1500", "1500"},
        {"1000", "1k"},
        {"1000000", "1M"},
        {"1000k", "1M"},
        {"1k", "1k"},
        {"+1k", "1k"},
        {"100k", "100k"},
        {"123456789000", "123456789k"},
        {"1M", "1M"},
        {"1G", "1G"},
        {"1T", "1T"},
        {"1P", "1P"},
        {"1E", "1E"},
        {"12E", "12E"},
        {"1.G", "1G"},
        {"10G", "10G"},
        {"1.5G", "1500M"},
        {"9223372036854775807", "9223372036854775807"},
        {"9223372036854775808", "9223372036854775808"},
        /* fractions */
        {"1.5", "1500m"},
        {"0.1", "100m"},
        {".5", "500m"},
        {"100m", "100m"},
        {"1000m", "1"},
        {"1500m", "1500m"},
        {"1m", "1m"},
        {"1u", "1u"},
        {"1000u", "1m"},
        {"1n", "1n"},
        {"100n", "100n"},
        {"1000n", "1u"},
        {"123.456789", "123456789u"},
        {"0.000000001", "1n"},
        {"0.001", "1m"},
        {"0.0005", "500u"},
        {"1.05", "1050m"},
        {"2.5m", "2500u"},
        /* rounding up (magnitude, away from zero) to nano precision */
        {"0.1n", "1n"},
        {"1.1n", "2n"},
        {"0.0000000001", "1n"},
        {"-0.1n", "-1n"},
        {"1.000000000000000000000000000001", "1000000001n"},
        {"0.5u", "500n"},
        {"0.0001m", "100n"},
        {"0.0000001m", "1n"},
        {"1e-10", "1e-9"},
        {"-1e-10", "-1e-9"},
        /* negative */
        {"-1", "-1"},
        {"-1.5", "-1500m"},
        {"-1k", "-1k"},
        {"-1Ki", "-1Ki"},
        {"-1.5Gi", "-1536Mi"},
        {"-100m", "-100m"},
        /* binary SI */
        {"1Ki", "1Ki"},
        {"1Mi", "1Mi"},
        {"1Gi", "1Gi"},
        {"1Ti", "1Ti"},
        {"1Pi", "1Pi"},
        {"1Ei", "1Ei"},
        {"1024Mi", "1Gi"},
        {"1024Ki", "1Mi"},
        {"1.5Gi", "1536Mi"},
        {"1.5Mi", "1536Ki"},
        {"1.5Ki", "1536"},
        {"0.5Ki", "512"},
        {"1023Ki", "1023Ki"},
        {"1025Ki", "1025Ki"},
        {"512Ki", "512Ki"},
        {"80Gi", "80Gi"},
        {"40Gi", "40Gi"},
        {"8Ki", "8Ki"},
        {"7Ei", "7Ei"},
        {"0.0001Ki", "102400u"},
        {"0.5Mi", "512Ki"},
        {"1.0001Ki", "1024102400u"},
        /* binary values are capped at 2^63-1 units */
        {"8Ei", "9223372036854775807"},
        {"1024Ei", "9223372036854775807"},
        {"100000Pi", "9223372036854775807"},
        /* decimal exponent */
        {"1e3", "1e3"},
        {"1E3", "1e3"},
        {"1e+3", "1e3"},
        {"10e3", "10e3"},
        {"1e-3", "1e-3"},
        {"1.5e3", "1500"},
        {"1e0", "1"},
        {"1e1", "10"},
        {"1e2", "100"},
        {"1e4", "10e3"},
        {"1e-9", "1e-9"},
        {"1.5e-3", "1500e-6"},
        {"2e6", "2e6"},
        {"-2e6", "-2e6"},
        {"1e18", "1e18"},
        {"1e21", "1e21"},
        {"1e29", "100e27"},
        /* an int64 exponent is truncated to 32 bits as Kubernetes stores it */
        {"1e4294967296", "1"},
        /* beyond Exa: the suffix stays E (Kubernetes would print a wrong "1") */
        {"1000E", "1000E"},
        {"100000000000000000000000000000", "100000000000E"},
};

TEST(canonical_forms) {
        char buf[DP_QUANTITY_MAX_LEN];
        int bad = 0;
        for (size_t i = 0; i < sizeof(canon) / sizeof(canon[0]); i++) {
                dp_quantity q;
                dp_error err = DP_ERROR_INIT;
                int r = dp_quantity_parse(canon[i].in, &q, &err);
                if (r < 0) {
                        fprintf(stderr, "%s: parse failed: %s\n", canon[i].in, err.msg);
                        bad++;
                        continue;
                }
                dp_quantity_format(&q, buf, sizeof(buf));
                if (strcmp(buf, canon[i].canonical) != 0) {
                        fprintf(stderr, "%s: got %s, want %s\n", canon[i].in, buf, canon[i].canonical);
                        bad++;
                        continue;
                }
                /* canonical output re-parses to the same value and the same text */
                dp_quantity q2;
                ASSERT_OK(dp_quantity_parse(buf, &q2, NULL));
                ASSERT_TRUE(q2.nanos == q.nanos);
                char buf2[DP_QUANTITY_MAX_LEN];
                dp_quantity_format(&q2, buf2, sizeof(buf2));
                ASSERT_STREQ(buf2, buf);
        }
        ASSERT_EQ(bad, 0);
}

static const struct {
        const char *in;
        int code;
        const char *msg;
} errors[] = {
        {"", -EINVAL, "quantities must match the regular expression"},
        {"abc", -EINVAL, "quantities must match the regular expression"},
        {"1.2.3", -EINVAL, "quantities must match"},
        {"1 ", -EINVAL, "quantities must match"},
        {" 1", -EINVAL, "quantities must match"},
        {"1Kb", -EINVAL, "quantities must match"},
        {"1e1.5", -EINVAL, "quantities must match"},
        {"--1", -EINVAL, "unable to parse quantity's suffix"},
        {"1/2", -EINVAL, "quantities must match"},
        {"0x10", -EINVAL, "quantities must match"},
        {"1K", -EINVAL, "unable to parse quantity's suffix"},
        {"1i", -EINVAL, "unable to parse quantity's suffix"},
        {"1e", -EINVAL, "unable to parse quantity's suffix"},
        {"1ee", -EINVAL, "unable to parse quantity's suffix"},
        {"1Mi5", -EINVAL, "unable to parse quantity's suffix"},
        {"1mi", -EINVAL, "unable to parse quantity's suffix"},
        {"1KiB", -EINVAL, "quantities must match"},
        {"1e99999999999999999999", -EINVAL, "unable to parse quantity's suffix"},
        {"1e30", -ERANGE, "too large"},
        {"1e2147483647", -ERANGE, "too large"},
        {"-1e30", -ERANGE, "too large"},
        {"999999999999999999E", -ERANGE, "too large"},
        {"1000000000000000000000000000000", -ERANGE, "too large"},
};

TEST(parse_errors) {
        for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
                dp_quantity q = {42, DP_QUANTITY_BINARY_SI};
                dp_error err = DP_ERROR_INIT;
                int r = dp_quantity_parse(errors[i].in, &q, &err);
                if (r != errors[i].code) DP_FAIL("\"%s\": got %d, want %d", errors[i].in, r, errors[i].code);
                ASSERT_CONTAINS(err.msg, errors[i].msg);
                /* ret untouched on failure */
                ASSERT_TRUE(q.nanos == 42);
        }
}

TEST(too_long) {
        char s[DP_QUANTITY_MAX_LEN + 2];
        memset(s, '1', sizeof(s) - 1);
        s[sizeof(s) - 1] = 0;
        dp_quantity q;
        dp_error err = DP_ERROR_INIT;
        ASSERT_EQ(dp_quantity_parse(s, &q, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "longer than");
        /* 128 characters of zeros and a fraction are fine */
        s[DP_QUANTITY_MAX_LEN] = 0;
        memset(s, '0', DP_QUANTITY_MAX_LEN);
        s[1] = '.';
        s[DP_QUANTITY_MAX_LEN - 1] = '1';
        ASSERT_OK(dp_quantity_parse(s, &q, NULL));
        ASSERT_TRUE(q.nanos == 1); /* rounded up */
}

static dp_quantity P(const char *s) {
        dp_quantity q;
        if (dp_quantity_parse(s, &q, NULL) < 0) DP_FAIL("parse %s", s);
        return q;
}

TEST(formats_recorded) {
        ASSERT_EQ(P("1Ki").format, DP_QUANTITY_BINARY_SI);
        ASSERT_EQ(P("1k").format, DP_QUANTITY_DECIMAL_SI);
        ASSERT_EQ(P("1e3").format, DP_QUANTITY_DECIMAL_EXPONENT);
        ASSERT_EQ(P("1E").format, DP_QUANTITY_DECIMAL_SI);
        ASSERT_EQ(P("1E3").format, DP_QUANTITY_DECIMAL_EXPONENT);
        /* a binary value below one becomes decimal, as Kubernetes does */
        ASSERT_EQ(P("0.0001Ki").format, DP_QUANTITY_DECIMAL_SI);
        ASSERT_EQ(P("0.5Ki").format, DP_QUANTITY_BINARY_SI);
}

TEST(values) {
        dp_quantity q = P("1.5");
        ASSERT_EQ(dp_quantity_value(&q), 2);
        ASSERT_EQ(dp_quantity_milli_value(&q), 1500);
        q = P("-1.5");
        ASSERT_EQ(dp_quantity_value(&q), -2);
        q = P("100m");
        ASSERT_EQ(dp_quantity_value(&q), 1);
        ASSERT_EQ(dp_quantity_milli_value(&q), 100);
        q = P("1n");
        ASSERT_EQ(dp_quantity_milli_value(&q), 1);
        q = P("80Gi");
        ASSERT_EQ(dp_quantity_value(&q), 85899345920LL);
        ASSERT_TRUE(dp_quantity_is_integer(&q));
        q = P("1e20");
        ASSERT_EQ(dp_quantity_value(&q), INT64_MAX);
        q = P("-1e20");
        ASSERT_EQ(dp_quantity_value(&q), INT64_MIN);
        q = P("250m");
        ASSERT_FALSE(dp_quantity_is_integer(&q));
        ASSERT_TRUE(dp_quantity_as_double(&q) == 0.25);
        q = P("1.5Gi");
        ASSERT_TRUE(dp_quantity_as_double(&q) == 1610612736.0);
        dp_quantity f = dp_quantity_from_int(3, DP_QUANTITY_BINARY_SI);
        ASSERT_EQ(dp_quantity_value(&f), 3);
}

TEST(compare) {
        dp_quantity a = P("1Gi"), b = P("1024Mi"), c = P("1G"), d = P("1.1Gi");
        ASSERT_EQ(dp_quantity_cmp(&a, &b), 0);
        ASSERT_EQ(dp_quantity_cmp(&c, &a), -1);
        ASSERT_EQ(dp_quantity_cmp(&d, &a), 1);
        dp_quantity m1 = P("1000m"), one = P("1");
        ASSERT_EQ(dp_quantity_cmp(&m1, &one), 0);
        dp_quantity n = P("-1"), z = P("0");
        ASSERT_EQ(dp_quantity_cmp(&n, &z), -1);
}

TEST(arithmetic) {
        char buf[DP_QUANTITY_MAX_LEN];
        dp_quantity a = P("40Gi"), b = P("8Gi"), r;
        ASSERT_OK(dp_quantity_sub(&a, &b, &r));
        dp_quantity_format(&r, buf, sizeof(buf));
        ASSERT_STREQ(buf, "32Gi");
        ASSERT_OK(dp_quantity_add(&a, &b, &r));
        dp_quantity_format(&r, buf, sizeof(buf));
        ASSERT_STREQ(buf, "48Gi");
        dp_quantity x = P("100m"), y = P("1.9");
        ASSERT_OK(dp_quantity_add(&x, &y, &r));
        dp_quantity_format(&r, buf, sizeof(buf));
        ASSERT_STREQ(buf, "2");
        ASSERT_OK(dp_quantity_sub(&x, &y, &r));
        dp_quantity_format(&r, buf, sizeof(buf));
        ASSERT_STREQ(buf, "-1800m");
        /* keeps a's format: binary minus decimal */
        dp_quantity g = P("1Gi"), k = P("1k");
        ASSERT_OK(dp_quantity_sub(&g, &k, &r));
        ASSERT_EQ(r.format, DP_QUANTITY_BINARY_SI);
        dp_quantity_format(&r, buf, sizeof(buf));
        ASSERT_STREQ(buf, "1073740824");
        /* overflow */
        dp_quantity big = P("5e28"), res = {7, 0};
        ASSERT_OK(dp_quantity_add(&big, &big, &r));
        ASSERT_EQ(dp_quantity_add(&r, &r, &res), -ERANGE);
        ASSERT_TRUE(res.nanos == 7);
        dp_quantity nb = P("-5e28");
        ASSERT_OK(dp_quantity_add(&nb, &nb, &r));
        ASSERT_EQ(dp_quantity_sub(&r, &big, &res), 0);
        ASSERT_EQ(dp_quantity_sub(&res, &big, &res), -ERANGE);
}

TEST(format_small_buffer) {
        dp_quantity q = P("123456789k");
        char buf[5];
        dp_quantity_format(&q, buf, sizeof(buf));
        ASSERT_STREQ(buf, "1234");
}

/* Array loops over the C library's log and sincos, for the random kernels' Box-Muller
 * transform: TensorFlow calls logf/sincosf (log/sincos for double) one value at a time,
 * and numpy's own vectorised log/sin/cos round differently in the last bit. Built by
 * common/ops/random/libm.py with plain -O2 (no -ffast-math: each call must be the
 * library's scalar function, as in TensorFlow). */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>

void flowrt_logf(const float *x, float *out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = logf(x[i]);
}

void flowrt_sincosf(const float *x, float *s, float *c, int64_t n) {
    for (int64_t i = 0; i < n; ++i) sincosf(x[i], &s[i], &c[i]);
}

void flowrt_log(const double *x, double *out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = log(x[i]);
}

void flowrt_sincos(const double *x, double *s, double *c, int64_t n) {
    for (int64_t i = 0; i < n; ++i) sincos(x[i], &s[i], &c[i]);
}

void flowrt_exp(const double *x, double *out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = exp(x[i]);
}

void flowrt_log1pf(const float *x, float *out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = log1pf(x[i]);
}

void flowrt_expm1f(const float *x, float *out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = expm1f(x[i]);
}

void flowrt_powf(const float *x, float y, float *out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = powf(x[i], y);
}

void flowrt_log1p(const double *x, double *out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = log1p(x[i]);
}

void flowrt_pow(const double *x, const double *y, double *out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = pow(x[i], y[i]);
}

void flowrt_lgamma(const double *x, double *out, int64_t n) {
    int sign;
    for (int64_t i = 0; i < n; ++i) out[i] = lgamma_r(x[i], &sign);
}

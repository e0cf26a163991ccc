/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The threads of one convolution. oneDNN fixes a primitive's thread count, and with it the
 * kernel and the split of the work, when the primitive is made. An estimate from the size
 * keeps small convolutions off a large team; but on the GPU host's 16-core Xeon the estimate's
 * full team ran DenseNet-121's 1x1 bottlenecks (10-16 MFLOP over a 14x14 or 7x7 concatenation)
 * 5-10 times slower than 8 threads did (470-710 against 35-190 us; 3x3 layers gained from 16),
 * so the count is measured: the estimate, a half and a quarter of it, each made and run on
 * zeroed buffers of the convolution's own shapes, and the fastest median kept. With fewer than
 * MEASURE_MIN_THREADS to give there is nothing to choose (two cores: the estimate runs).
 * FUSEBENCH_CONV_THREADS=estimate takes the estimate everywhere, to compare. */
#include "fb-cpu-conv-threads.h"

#include <omp.h>
#include <string.h>
#include <time.h>

/* Threads enough to keep each busy for about CONV_US_PER_THREAD microseconds of one core's
 * work (estimated at 50 GFLOP/s and 10 GB/s). Starting a team costs microseconds per thread:
 * a PP-OCR-style classifier (133 k parameters, maps of 12x48 and less) took 17 ms on 16
 * threads where ONNX Runtime takes 1 on one. FUSEBENCH_SPLIT_ALL=1 gives every one the whole
 * pool, to compare. */
#define CONV_US_PER_THREAD  15.0
#define MEASURE_MIN_THREADS 4
#define MEASURE_ROUNDS      5

static int
estimate_threads (const FbConvDesc *d, int pool)
{
  if (pool <= 1 || g_strcmp0 (g_getenv ("FUSEBENCH_SPLIT_ALL"), "1") == 0)
    return pool;
  double per_out = (double) (d->c / d->groups) * d->kh * d->kw;
  double flops = 2.0 * d->n * d->oh * d->ow * d->co * per_out;
  double bytes = 4.0 * ((double) d->n * (d->h * d->w * d->c + d->oh * d->ow * d->co) +
                        d->co * per_out);
  double us = flops / 50e3 + bytes / 10e3;
  return (int) CLAMP (us / CONV_US_PER_THREAD, 1, pool);
}

/* oneDNN's primitive is made on the calling thread's OpenMP count; the module's caller keeps
 * one outside its convolutions. */
static FbDnnlConv *
make_on (const FbConvDesc *d, const float *weights, int threads, char *why, size_t why_len)
{
  omp_set_num_threads (threads);
  FbDnnlConv *conv = fb_dnnl_conv_new (d, weights, why, why_len);
  omp_set_num_threads (1);
  return conv;
}

typedef struct {
  float *x, *bias, *add, *y;
} Scratch;

static double
run_us (FbDnnlConv *conv, const Scratch *s)
{
  struct timespec a, b;
  clock_gettime (CLOCK_MONOTONIC, &a);
  int status = fb_dnnl_conv_run (conv, s->x, s->bias, s->add, s->y);
  clock_gettime (CLOCK_MONOTONIC, &b);
  return status != 0 ? G_MAXDOUBLE : (b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3;
}

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* The index of the fastest of n made convolutions by their medians over MEASURE_ROUNDS
 * rounds, each round running every one once (so that a disturbance of the machine falls on
 * all of them alike). */
static int
fastest (FbDnnlConv **convs, int n, const FbConvDesc *d)
{
  size_t in = (size_t) (d->n * d->h * d->w * d->c), out = (size_t) (d->n * d->oh * d->ow * d->co);
  Scratch s = {
    g_new0 (float, in), g_new0 (float, d->co), g_new0 (float, out), g_new0 (float, out),
  };
  double us[3][MEASURE_ROUNDS];
  for (int i = 0; i < n; i++)
    run_us (convs[i], &s);   /* the first run touches the buffers and the primitive's own */
  for (int r = 0; r < MEASURE_ROUNDS; r++)
    for (int i = 0; i < n; i++)
      us[i][r] = run_us (convs[i], &s);
  int best = 0;
  double best_us = G_MAXDOUBLE;
  for (int i = 0; i < n; i++)
    {
      qsort (us[i], MEASURE_ROUNDS, sizeof (double), compare_doubles);
      if (us[i][MEASURE_ROUNDS / 2] < best_us)
        best = i, best_us = us[i][MEASURE_ROUNDS / 2];
    }
  g_free (s.x);
  g_free (s.bias);
  g_free (s.add);
  g_free (s.y);
  return best;
}

GHashTable *
_fb_cpu_conv_choices_new (void)
{
  return g_hash_table_new_full (g_bytes_hash, g_bytes_equal, (GDestroyNotify) g_bytes_unref, NULL);
}

FbDnnlConv *
_fb_cpu_conv_new (const FbConvDesc *d, const float *weights, int pool, GHashTable *choices,
                  char *why, size_t why_len)
{
  int estimate = estimate_threads (d, pool);
  g_autoptr(GBytes) key = g_bytes_new (d, sizeof *d);
  gpointer known = g_hash_table_lookup (choices, key);
  if (known != NULL)
    return make_on (d, weights, GPOINTER_TO_INT (known), why, why_len);
  if (estimate < MEASURE_MIN_THREADS ||
      g_strcmp0 (g_getenv ("FUSEBENCH_CONV_THREADS"), "estimate") == 0)
    return make_on (d, weights, estimate, why, why_len);

  int counts[3] = { estimate, estimate / 2, estimate / 4 };
  FbDnnlConv *convs[3] = { NULL };
  int n = 0;
  for (int i = 0; i < 3; i++)
    {
      convs[n] = make_on (d, weights, counts[i], why, why_len);
      if (convs[n] == NULL)
        break;
      counts[n++] = counts[i];
    }
  if (n == 0)
    return NULL;
  int best = fastest (convs, n, d);
  for (int i = 0; i < n; i++)
    if (i != best)
      fb_dnnl_conv_free (convs[i]);
  g_hash_table_insert (choices, g_bytes_ref (key), GINT_TO_POINTER (counts[best]));
  return convs[best];
}

/* SPDX-License-Identifier: GPL-3.0-or-later */
/* GRU and LSTM: every direction, the activation lists with their alpha/beta, clip,
 * linear_before_reset, input_forget, peepholes, sequence_lens, initial states and both layouts.
 * Everything is computed in double; batch rows past their sequence length keep their state and
 * write zeros to Y. */
#include "fb-interp-private.h"

#include "fb-rnn-spec.h"

#include <math.h>
#include <string.h>

static double
act_apply (const FbRnnAct *a, double x)
{
  switch (a->kind)
    {
    case FB_RNN_SIGMOID: return x >= 0 ? 1 / (1 + exp (-x)) : exp (x) / (1 + exp (x));
    case FB_RNN_TANH: return tanh (x);
    case FB_RNN_RELU: return x > 0 ? x : 0;
    case FB_RNN_AFFINE: return a->alpha * x + a->beta;
    case FB_RNN_LEAKY_RELU: return x < 0 ? a->alpha * x : x;
    case FB_RNN_THRESHOLDED_RELU: return x > a->alpha ? x : 0;
    case FB_RNN_SCALED_TANH: return a->alpha * tanh (a->beta * x);
    case FB_RNN_HARD_SIGMOID: return fmax (0, fmin (1, a->alpha * x + a->beta));
    case FB_RNN_ELU: return x < 0 ? a->alpha * expm1 (x) : x;
    case FB_RNN_SOFTSIGN: return x / (1 + fabs (x));
    case FB_RNN_SOFTPLUS: return x > 0 ? x + log1p (exp (-x)) : log1p (exp (x));
    default: g_assert_not_reached ();
    }
}

/* The node's directions and activations, with errors in this module's domain. */
static gboolean
read_activations (const FbNode *node, int per_dir, FbRnnAct *acts, GError **error)
{
  g_autoptr(GError) local = NULL;

  if (fb_rnn_read_activations (node, per_dir, acts, &local))
    return TRUE;
  return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED, "%s", local->message);
}

gboolean
_fb_interp_check_recurrent (const FbNode *node, GError **error)
{
  FbRnnAct acts[6];

  if (fb_node_attr_int (node, "hidden_size", 0) < 0)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "hidden_size is negative");
  return read_activations (node, node->op == FB_OP_LSTM ? 3 : node->op == FB_OP_RNN ? 1 : 2,
                           acts, error);
}

/* Shapes and values shared by both cells. Sequences are indexed [t][b][...] whatever the
 * layout; the layout only changes how X, Y, Y_h and Y_c are read and written. */
typedef struct {
  int64_t  T, B, I, H, dirs, gates;
  gboolean batch_major;
  double  *x, *w, *r, *bias, *h0, *c0, *p;
  int64_t *lens;
  double   clip;
} Rnn;

static gboolean
rnn_load (const FbNode *node, FbTensor *const *in, int gates, Rnn *s, GError **error)
{
  FbTensor *X = in[0], *W = in[1], *R = in[2];
  FbTensor *Bt = node->n_inputs > 3 ? in[3] : NULL, *L = node->n_inputs > 4 ? in[4] : NULL;
  FbTensor *H0 = node->n_inputs > 5 ? in[5] : NULL;
  FbTensor *C0 = node->op == FB_OP_LSTM && node->n_inputs > 6 ? in[6] : NULL;
  FbTensor *P = node->op == FB_OP_LSTM && node->n_inputs > 7 ? in[7] : NULL;

  memset (s, 0, sizeof *s);
  if (!_fb_interp_need_float (node, X, error))
    return FALSE;
  s->batch_major = fb_node_attr_int (node, "layout", 0) != 0;
  s->dirs = fb_rnn_directions (node);
  s->gates = gates;
  if (X->rank != 3 || W->rank != 3 || R->rank != 3)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "X, W and R must be 3-D");
  s->T = s->batch_major ? X->dims[1] : X->dims[0];
  s->B = s->batch_major ? X->dims[0] : X->dims[1];
  s->I = X->dims[2];
  s->H = fb_node_attr_int (node, "hidden_size", R->dims[2]);
  if (W->dims[0] != s->dirs || W->dims[1] != gates * s->H || W->dims[2] != s->I ||
      R->dims[0] != s->dirs || R->dims[1] != gates * s->H || R->dims[2] != s->H)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "W or R does not fit %" G_GINT64_FORMAT " directions, %d gates, "
                            "hidden size %" G_GINT64_FORMAT " and input size %" G_GINT64_FORMAT,
                            s->dirs, gates, s->H, s->I);
  if (Bt != NULL && Bt->numel != s->dirs * 2 * gates * s->H)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "B has the wrong size");
  if ((H0 != NULL && H0->numel != s->dirs * s->B * s->H) ||
      (C0 != NULL && C0->numel != s->dirs * s->B * s->H))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "an initial state has the wrong size");
  if (P != NULL && P->numel != s->dirs * 3 * s->H)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "P has the wrong size");
  if (L != NULL && L->numel != s->B)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "sequence_lens has %" G_GINT64_FORMAT " entries for batch %"
                            G_GINT64_FORMAT, L->numel, s->B);
  s->x = _fb_interp_read_f64 (X);
  s->w = _fb_interp_read_f64 (W);
  s->r = _fb_interp_read_f64 (R);
  s->bias = Bt ? _fb_interp_read_f64 (Bt) : g_new0 (double, s->dirs * 2 * gates * s->H + 1);
  s->h0 = H0 ? _fb_interp_read_f64 (H0) : g_new0 (double, s->dirs * s->B * s->H + 1);
  s->c0 = C0 ? _fb_interp_read_f64 (C0) : g_new0 (double, s->dirs * s->B * s->H + 1);
  s->p = P ? _fb_interp_read_f64 (P) : g_new0 (double, s->dirs * 3 * s->H + 1);
  s->lens = g_new (int64_t, MAX (s->B, 1));
  for (int64_t b = 0; b < s->B; b++)
    {
      s->lens[b] = L ? fb_tensor_get_i64 (L, b) : s->T;
      if (s->lens[b] < 0 || s->lens[b] > s->T)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "sequence length %" G_GINT64_FORMAT " is outside 0..%"
                                G_GINT64_FORMAT, s->lens[b], s->T);
    }
  s->clip = fb_node_attr_float (node, "clip", 0);
  return TRUE;
}

static void
rnn_clear (Rnn *s)
{
  g_free (s->x); g_free (s->w); g_free (s->r); g_free (s->bias);
  g_free (s->h0); g_free (s->c0); g_free (s->p); g_free (s->lens);
}

/* Y for every step: T x dirs x B x H, which a long sequence and a wide state can make large. */
static double *
rnn_sequence_buffer (const FbNode *node, const Rnn *s, GError **error)
{
  int64_t n;

  if (__builtin_mul_overflow (s->T, s->dirs * s->B, &n) || __builtin_mul_overflow (n, s->H, &n))
    n = -1;
  return _fb_interp_alloc (node, n, sizeof (double), error);
}

/* What LSTM and GRU start with: the activations (per_dir a direction), the operands of a
 * cell with this many gates, and Y's buffer; NULL with s cleared on an error. */
static double *
rnn_start (const FbNode *node, FbTensor *const *in, int per_dir, int gates, FbRnnAct *acts,
           Rnn *s, GError **error)
{
  double *y = NULL;
  if (read_activations (node, per_dir, acts, error) && rnn_load (node, in, gates, s, error))
    y = rnn_sequence_buffer (node, s, error);
  if (y == NULL)
    rnn_clear (s);
  return y;
}

static double
clipped (const Rnn *s, double v)
{
  return s->clip > 0 ? CLAMP (v, -s->clip, s->clip) : v;
}

static const double *
x_at (const Rnn *s, int64_t t, int64_t b)
{
  return s->x + (s->batch_major ? b * s->T + t : t * s->B + b) * s->I;
}

/* Y index of (t, direction, b), in either layout. */
static int64_t
y_at (const Rnn *s, int64_t t, int64_t d, int64_t b)
{
  return (s->batch_major ? ((b * s->T + t) * s->dirs + d) : ((t * s->dirs + d) * s->B + b)) * s->H;
}

static int64_t
state_at (const Rnn *s, int64_t d, int64_t b)
{
  return (s->batch_major ? b * s->dirs + d : d * s->B + b) * s->H;
}

/* dst[g*H + j] = sum_k src[k] * M[(g*H + j) * n + k] for every gate row. */
static void
matvec (const double *m, const double *v, int64_t rows, int64_t n, double *dst)
{
  for (int64_t i = 0; i < rows; i++)
    {
      double acc = 0;
      for (int64_t k = 0; k < n; k++)
        acc += m[i * n + k] * v[k];
      dst[i] = acc;
    }
}

static gboolean
rnn_outputs (const FbNode *node, const FbTensor *X, const Rnn *s, double *y, double *yh,
             double *yc, FbTensor **out, GError **error)
{
  int64_t ydims[4], sdims[3];
  double *src[3] = { y, yh, yc };

  if (s->batch_major)
    {
      ydims[0] = s->B; ydims[1] = s->T; ydims[2] = s->dirs; ydims[3] = s->H;
      sdims[0] = s->B; sdims[1] = s->dirs; sdims[2] = s->H;
    }
  else
    {
      ydims[0] = s->T; ydims[1] = s->dirs; ydims[2] = s->B; ydims[3] = s->H;
      sdims[0] = s->dirs; sdims[1] = s->B; sdims[2] = s->H;
    }
  for (guint k = 0; k < node->n_outputs && k < 3; k++)
    {
      if (src[k] == NULL)
        continue;
      out[k] = _fb_interp_new (node, X->dtype, k == 0 ? 4 : 3, k == 0 ? ydims : sdims, error);
      if (out[k] == NULL)
        return FALSE;
      _fb_interp_write_f64 (out[k], src[k]);
    }
  return TRUE;
}

gboolean
_fb_interp_lstm (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                 GError **error)
{
  FbRnnAct acts[6];
  Rnn s = { 0 };
  gboolean couple = fb_node_attr_int (node, "input_forget", 0) != 0;
  gboolean reverse = g_strcmp0 (fb_node_attr_string (node, "direction", "forward"), "reverse") == 0;
  g_autofree double *y = NULL, *yh = NULL, *yc = NULL, *gx = NULL, *gh = NULL;
  g_autofree double *h = NULL, *c = NULL;
  gboolean ok;

  y = rnn_start (node, in, 3, 4, acts, &s, error);
  if (y == NULL)
    return FALSE;
  yh = g_new0 (double, MAX (s.dirs * s.B * s.H, 1));
  yc = g_new0 (double, MAX (s.dirs * s.B * s.H, 1));
  gx = g_new (double, 4 * s.H + 1);
  gh = g_new (double, 4 * s.H + 1);
  h = g_new (double, s.H + 1);
  c = g_new (double, s.H + 1);
  for (int64_t d = 0; d < s.dirs; d++)
    {
      gboolean backward = d == 1 || reverse;
      const double *W = s.w + d * 4 * s.H * s.I, *R = s.r + d * 4 * s.H * s.H;
      const double *Wb = s.bias + d * 8 * s.H, *Rb = Wb + 4 * s.H, *P = s.p + d * 3 * s.H;
      const FbRnnAct *f = &acts[d * 3], *g = &acts[d * 3 + 1], *hact = &acts[d * 3 + 2];
      for (int64_t b = 0; b < s.B; b++)
        {
          memcpy (h, s.h0 + state_at (&s, d, b), sizeof (double) * s.H);
          memcpy (c, s.c0 + state_at (&s, d, b), sizeof (double) * s.H);
          for (int64_t step = 0; step < s.lens[b]; step++)
            {
              int64_t t = backward ? s.lens[b] - 1 - step : step;
              matvec (W, x_at (&s, t, b), 4 * s.H, s.I, gx);
              matvec (R, h, 4 * s.H, s.H, gh);
              for (int64_t j = 0; j < s.H; j++)
                {
                  /* Gate order in W, R and B: input, output, forget, cell. */
                  double pi = gx[j] + gh[j] + Wb[j] + Rb[j] + P[j] * c[j];
                  double pf = gx[2 * s.H + j] + gh[2 * s.H + j] + Wb[2 * s.H + j] +
                              Rb[2 * s.H + j] + P[2 * s.H + j] * c[j];
                  double pc = gx[3 * s.H + j] + gh[3 * s.H + j] + Wb[3 * s.H + j] + Rb[3 * s.H + j];
                  double it = act_apply (f, clipped (&s, pi));
                  double ft = couple ? 1 - it : act_apply (f, clipped (&s, pf));
                  double ct = act_apply (g, clipped (&s, pc));
                  double cn = ft * c[j] + it * ct;
                  double po = gx[s.H + j] + gh[s.H + j] + Wb[s.H + j] + Rb[s.H + j] + P[s.H + j] * cn;
                  double ot = act_apply (f, clipped (&s, po));
                  c[j] = cn;
                  gh[j] = ot * act_apply (hact, cn);   /* the new h, kept until the step ends */
                }
              memcpy (h, gh, sizeof (double) * s.H);
              memcpy (y + y_at (&s, t, d, b), h, sizeof (double) * s.H);
            }
          memcpy (yh + state_at (&s, d, b), h, sizeof (double) * s.H);
          memcpy (yc + state_at (&s, d, b), c, sizeof (double) * s.H);
        }
    }
  ok = rnn_outputs (node, in[0], &s, y, yh, yc, out, error);
  rnn_clear (&s);
  return ok;
}

gboolean
_fb_interp_gru (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                GError **error)
{
  FbRnnAct acts[4];
  Rnn s = { 0 };
  gboolean lbr = fb_node_attr_int (node, "linear_before_reset", 0) != 0;
  gboolean reverse = g_strcmp0 (fb_node_attr_string (node, "direction", "forward"), "reverse") == 0;
  g_autofree double *y = NULL, *yh = NULL, *gx = NULL, *gh = NULL, *h = NULL, *rh = NULL;
  gboolean ok;

  y = rnn_start (node, in, 2, 3, acts, &s, error);
  if (y == NULL)
    return FALSE;
  yh = g_new0 (double, MAX (s.dirs * s.B * s.H, 1));
  gx = g_new (double, 3 * s.H + 1);
  gh = g_new (double, 3 * s.H + 1);
  h = g_new (double, s.H + 1);
  rh = g_new (double, s.H + 1);
  for (int64_t d = 0; d < s.dirs; d++)
    {
      gboolean backward = d == 1 || reverse;
      const double *W = s.w + d * 3 * s.H * s.I, *R = s.r + d * 3 * s.H * s.H;
      const double *Wb = s.bias + d * 6 * s.H, *Rb = Wb + 3 * s.H;
      const double *Rh = R + 2 * s.H * s.H;
      const FbRnnAct *f = &acts[d * 2], *g = &acts[d * 2 + 1];
      for (int64_t b = 0; b < s.B; b++)
        {
          memcpy (h, s.h0 + state_at (&s, d, b), sizeof (double) * s.H);
          for (int64_t step = 0; step < s.lens[b]; step++)
            {
              int64_t t = backward ? s.lens[b] - 1 - step : step;
              double *z = gx, *r = gx + s.H;
              matvec (W, x_at (&s, t, b), 3 * s.H, s.I, gx);
              /* Update and reset gates (order z, r, h) see the previous h directly. */
              matvec (R, h, 2 * s.H, s.H, gh);
              for (int64_t j = 0; j < 2 * s.H; j++)
                gx[j] = act_apply (f, clipped (&s, gx[j] + gh[j] + Wb[j] + Rb[j]));
              if (lbr)
                {
                  matvec (Rh, h, s.H, s.H, rh);
                  for (int64_t j = 0; j < s.H; j++)
                    rh[j] = r[j] * (rh[j] + Rb[2 * s.H + j]);
                }
              else
                {
                  for (int64_t j = 0; j < s.H; j++)
                    gh[j] = r[j] * h[j];
                  matvec (Rh, gh, s.H, s.H, rh);
                  for (int64_t j = 0; j < s.H; j++)
                    rh[j] += Rb[2 * s.H + j];
                }
              for (int64_t j = 0; j < s.H; j++)
                {
                  double ht = act_apply (g, clipped (&s, gx[2 * s.H + j] + Wb[2 * s.H + j] + rh[j]));
                  h[j] = (1 - z[j]) * ht + z[j] * h[j];
                }
              memcpy (y + y_at (&s, t, d, b), h, sizeof (double) * s.H);
            }
          memcpy (yh + state_at (&s, d, b), h, sizeof (double) * s.H);
        }
    }
  ok = rnn_outputs (node, in[0], &s, y, yh, NULL, out, error);
  rnn_clear (&s);
  return ok;
}

gboolean
_fb_interp_rnn (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                GError **error)
{
  FbRnnAct acts[2];
  Rnn s = { 0 };
  gboolean reverse = g_strcmp0 (fb_node_attr_string (node, "direction", "forward"), "reverse") == 0;
  g_autofree double *y = NULL, *yh = NULL, *gx = NULL, *gh = NULL, *h = NULL;
  gboolean ok;

  y = rnn_start (node, in, 1, 1, acts, &s, error);
  if (y == NULL)
    return FALSE;
  yh = g_new0 (double, MAX (s.dirs * s.B * s.H, 1));
  gx = g_new (double, s.H + 1);
  gh = g_new (double, s.H + 1);
  h = g_new (double, s.H + 1);
  for (int64_t d = 0; d < s.dirs; d++)
    {
      gboolean backward = d == 1 || reverse;
      const double *W = s.w + d * s.H * s.I, *R = s.r + d * s.H * s.H;
      const double *Wb = s.bias + d * 2 * s.H, *Rb = Wb + s.H;
      for (int64_t b = 0; b < s.B; b++)
        {
          memcpy (h, s.h0 + state_at (&s, d, b), sizeof (double) * s.H);
          for (int64_t step = 0; step < s.lens[b]; step++)
            {
              int64_t t = backward ? s.lens[b] - 1 - step : step;
              matvec (W, x_at (&s, t, b), s.H, s.I, gx);
              matvec (R, h, s.H, s.H, gh);
              for (int64_t j = 0; j < s.H; j++)
                h[j] = act_apply (&acts[d], clipped (&s, gx[j] + gh[j] + Wb[j] + Rb[j]));
              memcpy (y + y_at (&s, t, d, b), h, sizeof (double) * s.H);
            }
          memcpy (yh + state_at (&s, d, b), h, sizeof (double) * s.H);
        }
    }
  ok = rnn_outputs (node, in[0], &s, y, yh, NULL, out, error);
  rnn_clear (&s);
  return ok;
}

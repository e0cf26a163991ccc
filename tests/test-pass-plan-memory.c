/* SPDX-License-Identifier: GPL-3.0-or-later */
/* plan-memory: liveness, in-place updates, buffer reuse; no two values alive at once overlap. */
#include "fb-test-passes.h"

#include <string.h>

static FbPipeline *
plan (FbGraph *g)
{
  g_autoptr(FbPipelineOptions) o = tp_only ("plan-memory", NULL);
  FbPipeline *p = tp_run (g, o);
  tp_assert_stages_agree (p, 23);
  return p;
}

static int64_t
bytes_of (const FbValue *v)
{
  return fb_shape_numel (&v->shape, NULL) * (int64_t) fb_dtype_size (v->dtype);
}

/* Every pair of planned values alive at the same time either shares a buffer (in place) or
 * occupies disjoint bytes. */
static void
assert_plan_sound (const FbGraph *g)
{
  guint n = g->nodes->len;
  g_autoptr(GHashTable) uses = fb_graph_build_uses (g);
  g_autoptr(GPtrArray) planned = g_ptr_array_new ();
  g_autoptr(GArray) first = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr(GArray) last = g_array_new (FALSE, FALSE, sizeof (guint));

  for (guint i = 0; i < n; i++)
    {
      FbNode *node = g_ptr_array_index (g->nodes, i);
      for (guint k = 0; k < node->n_outputs; k++)
        {
          FbValue *v = node->outputs[k];
          GPtrArray *users;
          guint end = i;
          if (v == NULL || v->buffer == 0)
            continue;
          g_assert_cmpint (v->offset % 64, ==, 0);
          users = g_hash_table_lookup (uses, v);
          for (guint u = 0; users && u < users->len; u++)
            {
              guint pos;
              g_assert_true (g_ptr_array_find (g->nodes, g_ptr_array_index (users, u), &pos));
              end = MAX (end, pos);
            }
          if (v->is_output)
            end = n;
          g_ptr_array_add (planned, v);
          g_array_append_val (first, i);
          g_array_append_val (last, end);
        }
    }
  for (guint a = 0; a < planned->len; a++)
    for (guint b = a + 1; b < planned->len; b++)
      {
        FbValue *va = g_ptr_array_index (planned, a), *vb = g_ptr_array_index (planned, b);
        guint fa = g_array_index (first, guint, a), la = g_array_index (last, guint, a);
        guint fbb = g_array_index (first, guint, b), lb = g_array_index (last, guint, b);
        /* A value written in place dies where its successor is born: they touch, not overlap. */
        gboolean alive_together = fa < lb && fbb < la;
        gboolean disjoint = va->offset + bytes_of (va) <= vb->offset ||
                            vb->offset + bytes_of (vb) <= va->offset;
        if (alive_together && va->buffer != vb->buffer && !disjoint)
          g_error ("'%s' and '%s' are alive together and overlap", va->name, vb->name);
      }
}

/* x -> relu -> exp -> neg -> sqrt(abs): each step dies into the next, all in one buffer. */
static void
test_in_place_chain (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 2, TP_DIMS (16, 16));
  FbValue *v = tp_op (g, FB_OP_RELU, "relu", x, NULL);
  v = tp_op (g, FB_OP_EXP, "exp", v, NULL);
  v = tp_op (g, FB_OP_NEG, "neg", v, NULL);
  v = tp_op (g, FB_OP_ABS, "abs", v, NULL);
  tp_output (g, v);
  g_autoptr(FbPipeline) p = plan (g);
  FbGraph *out = tp_stage_graph (p, "plan-memory");
  FbStage *s = fb_pipeline_stage_by_name (p, "plan-memory");

  for (guint i = 0; i < out->nodes->len; i++)
    g_assert_cmpint (((FbNode *) g_ptr_array_index (out->nodes, i))->outputs[0]->buffer, ==, 1);
  /* The caller's input is never planned or overwritten. */
  g_assert_cmpint (((FbValue *) g_ptr_array_index (out->inputs, 0))->buffer, ==, 0);
  g_assert_nonnull (strstr (s->summary, "3 in place"));
  g_assert_nonnull (strstr (s->summary, "peak activations"));
  assert_plan_sound (out);
}

/* a is still read after b is computed: b cannot overwrite a. */
static void
test_live_value_is_not_overwritten (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 2, TP_DIMS (8, 8));
  FbValue *a = tp_op (g, FB_OP_RELU, "a", x, NULL);
  FbValue *b = tp_op (g, FB_OP_EXP, "b", a, NULL);
  FbValue *c = tp_op (g, FB_OP_ADD, "c", a, b, NULL);
  tp_output (g, tp_op (g, FB_OP_TRANSPOSE, "t", c, NULL));
  g_autoptr(FbPipeline) p = plan (g);
  FbGraph *out = tp_stage_graph (p, "plan-memory");
  FbValue *pa = fb_graph_lookup_value (out, a->name), *pb = fb_graph_lookup_value (out, b->name);
  FbValue *pc = fb_graph_lookup_value (out, c->name);

  g_assert_cmpint (pa->buffer, !=, pb->buffer);
  g_assert_true (pc->buffer == pa->buffer || pc->buffer == pb->buffer);
  assert_plan_sound (out);
}

/* A long chain of non-elementwise nodes reuses the bytes of values that died. */
static void
test_reuse_after_death (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *v = tp_input (g, "x", 2, TP_DIMS (32, 32));
  int64_t arena = 0;
  FbGraph *out;

  for (int i = 0; i < 6; i++)
    {
      g_autofree char *name = g_strdup_printf ("t%d", i);
      v = tp_op (g, FB_OP_TRANSPOSE, name, v, NULL);
    }
  tp_output (g, v);
  g_autoptr(FbPipeline) p = plan (g);
  out = tp_stage_graph (p, "plan-memory");
  for (guint i = 0; i < out->values->len; i++)
    {
      FbValue *pv = g_ptr_array_index (out->values, i);
      if (pv->buffer)
        arena = MAX (arena, pv->offset + bytes_of (pv));
    }
  /* Two buffers ping-pong: far less than six. */
  g_assert_cmpint (arena, <=, 2 * 32 * 32 * 4);
  assert_plan_sound (out);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/pass/plan-memory/in-place-chain", test_in_place_chain);
  g_test_add_func ("/pass/plan-memory/live-value", test_live_value_is_not_overwritten);
  g_test_add_func ("/pass/plan-memory/reuse", test_reuse_after_death);
  return g_test_run ();
}

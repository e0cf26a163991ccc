/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The pipeline: stage names, diffs keyed on ids, provenance, re-runs after a toggle that redo
 * only later stages, stages shared by reference with readers in other threads, --no-fuse, the
 * NHWC layout, option errors, cancellation, and the verifier naming the pass that broke the
 * graph. */
#include "fb-test-passes.h"
#include "fb-pass-private.h"
#include "fb-compare.h"
#include "fb-interp.h"

#include <string.h>

/* x -> Identity -> Conv(w, b) -> Relu -> Conv(w2) -> Add(bias) -> y */
static FbGraph *
small_cnn (void)
{
  FbGraph *g = tp_graph (17);
  FbValue *x = tp_input (g, "x", 4, TP_DIMS (1, 3, 6, 6));
  FbValue *v = tp_op (g, FB_OP_IDENTITY, "identity", x, NULL);

  v = tp_op (g, FB_OP_CONV, "conv1", v, tp_const (g, "w1", 4, TP_DIMS (4, 3, 3, 3), NULL),
             tp_const (g, "b1", 1, TP_DIMS (4), NULL), NULL);
  tp_attr_ints (g, v, "pads", 4, TP_DIMS (1, 1, 1, 1));
  v = tp_op (g, FB_OP_RELU, "relu", v, NULL);
  v = tp_op (g, FB_OP_CONV, "conv2", v, tp_const (g, "w2", 4, TP_DIMS (5, 4, 1, 1), NULL), NULL);
  v = tp_op (g, FB_OP_ADD, "bias", v, tp_const (g, "b2", 3, TP_DIMS (5, 1, 1), NULL), NULL);
  tp_output (g, v);
  return g;
}

static guint
node_id (const FbGraph *g, const char *name)
{
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const FbNode *n = g_ptr_array_index (g->nodes, i);
      if (g_strcmp0 (n->name, name) == 0)
        return n->id;
    }
  g_assert_not_reached ();
  return 0;
}

static void
test_stage_names (void)
{
  g_autoptr(FbPipeline) p = tp_run (small_cnn (), NULL);
  const char * const *names = fb_pipeline_pass_names ();
  guint n_passes = g_strv_length ((char **) names);

  g_assert_cmpuint (n_passes, ==, 9);
  g_assert_cmpuint (fb_pipeline_n_stages (p), ==, n_passes + 2);
  g_assert_cmpstr (fb_pipeline_stage (p, 0)->name, ==, "import");
  for (guint i = 0; i < n_passes; i++)
    g_assert_cmpstr (fb_pipeline_stage (p, i + 1)->name, ==, names[i]);
  g_assert_cmpstr (fb_pipeline_stage (p, n_passes + 1)->name, ==, "final");
  g_assert_true (fb_pipeline_final (p) == fb_pipeline_stage (p, n_passes + 1)->graph);
  g_assert_true (fb_pipeline_stage_by_name (p, "fold-constants") == fb_pipeline_stage (p, 2));
  g_assert_null (fb_pipeline_stage_by_name (p, "no-such-stage"));
  for (guint i = 1; i < fb_pipeline_n_stages (p); i++)
    {
      FbStage *s = fb_pipeline_stage (p, i);
      g_assert_cmpuint (s->nodes_before, ==, fb_pipeline_stage (p, i - 1)->nodes_after);
      g_assert_nonnull (s->summary);
      g_assert_cmpfloat (s->wall_ms, >=, 0);
    }
  tp_assert_stages_agree (p, 1);
}

static void
test_diff_ids (void)
{
  FbGraph *g = small_cnn ();
  guint identity = node_id (g, "identity"), conv1 = node_id (g, "conv1");
  guint relu = node_id (g, "relu"), conv2 = node_id (g, "conv2"), bias = node_id (g, "bias");
  g_autoptr(FbPipeline) p = tp_run (g, NULL);
  FbStage *cleanup = fb_pipeline_stage_by_name (p, "cleanup");
  FbStage *fuse = fb_pipeline_stage_by_name (p, "fuse-epilogue");
  const FbChange *c;
  FbNode *fused_a, *fused_b;

  /* The Identity is gone; the Conv that read it changed (new input), same id. */
  c = tp_change (cleanup, identity);
  g_assert_nonnull (c);
  g_assert_cmpint (c->kind, ==, FB_CHANGE_REMOVED);
  g_assert_cmpuint (c->went_to, ==, conv1);
  c = tp_change (cleanup, conv1);
  g_assert_nonnull (c);
  g_assert_cmpint (c->kind, ==, FB_CHANGE_CHANGED);
  g_assert_null (tp_change (cleanup, relu));

  /* Two epilogues: conv1+relu and conv2+bias, each member fused into its node. */
  g_assert_cmpuint (fuse->graph->nodes->len, ==, 2);
  fused_a = g_ptr_array_index (fuse->graph->nodes, 0);
  fused_b = g_ptr_array_index (fuse->graph->nodes, 1);
  g_assert_cmpint (fused_a->op, ==, FB_OP_FUSED);
  g_assert_cmpstr (fb_node_attr_string (fused_a, "kind", ""), ==, "epilogue");
  g_assert_cmpint (tp_change (fuse, fused_a->id)->kind, ==, FB_CHANGE_ADDED);
  for (guint i = 0; i < 4; i++)
    {
      guint id = (guint[]) { conv1, relu, conv2, bias }[i];
      c = tp_change (fuse, id);
      g_assert_nonnull (c);
      g_assert_cmpint (c->kind, ==, FB_CHANGE_FUSED);
      g_assert_cmpuint (c->fused_into, ==, i < 2 ? fused_a->id : fused_b->id);
    }
  /* A fused node stands for its members, down to the original nodes. */
  g_assert_cmpuint (fused_a->n_prov, >=, 2);
  for (guint k = 0; k < fused_a->n_prov; k++)
    g_assert_nonnull (fb_model_orig_name (fuse->graph->model, fused_a->prov[k]));
  /* Untouched nodes keep their ids in later stages. */
  g_assert_nonnull (fb_graph_find_node (fb_pipeline_final (p), fused_a->id));
}

/* The first stage a run computes, from its progress reports (0 when it computed none). */
static void
first_done (guint done, guint total, gpointer data)
{
  guint *first = data;
  if (*first == 0)
    *first = done;
}

static guint
rerun (FbPipeline *p, const FbPipelineOptions *o)
{
  g_autoptr(GError) error = NULL;
  guint first = 0;
  guint stale = fb_pipeline_first_stale (p, o);

  g_assert_true (fb_pipeline_run (p, o, NULL, first_done, &first, &error));
  /* What the pipeline said it would redo is what it redid. */
  if (stale < fb_pipeline_n_stages (p))
    g_assert_cmpuint (stale, ==, first - 1);
  g_assert_no_error (error);
  /* progress reports the number of stages done: stage k is done as k + 1. */
  return first - 1;
}

static void
test_rerun_only_later_stages (void)
{
  g_autoptr(FbPipeline) p = tp_run (small_cnn (), NULL);
  g_autoptr(FbPipelineOptions) o = fb_pipeline_options_new ();
  guint n = fb_pipeline_n_stages (p);
  FbStage *kept[11];

  /* The same options again: nothing is recomputed (the only report is "all done"). */
  g_assert_cmpuint (rerun (p, o), ==, n - 1);

  /* Disabling fuse-epilogue (stage 6) keeps every stage before it as it was. */
  for (guint i = 0; i < 6; i++)
    kept[i] = fb_pipeline_stage (p, i);
  g_ptr_array_add (o->disabled_passes, g_strdup ("fuse-epilogue"));
  g_assert_cmpuint (rerun (p, o), ==, 6);
  g_assert_cmpuint (fb_pipeline_n_stages (p), ==, n);
  for (guint i = 0; i < 6; i++)
    g_assert_true (fb_pipeline_stage (p, i) == kept[i]);
  g_assert_false (fb_pipeline_stage (p, 6)->enabled);
  g_assert_cmpstr (fb_pipeline_stage (p, 6)->summary, ==, "disabled");
  g_assert_cmpuint (fb_pipeline_stage (p, 6)->changes->len, ==, 0);
  g_assert_cmpuint (tp_count (fb_pipeline_final (p), FB_OP_FUSED, FALSE), ==, 0);
  tp_assert_stages_agree (p, 2);

  /* A layout change redoes only layout (stage 8), plan-memory and final. */
  o->layout = FB_LAYOUT_NHWC;
  g_assert_cmpuint (rerun (p, o), ==, 8);
  /* A --no-fuse change starts at simplify (stage 3), the first pass that reads it. */
  g_ptr_array_add (o->no_fuse, g_strdup ("relu"));
  g_assert_cmpuint (rerun (p, o), ==, 3);
  /* Pinned input shapes change what the first pass starts from. */
  {
    FbShape s = fb_shape_make (4, TP_DIMS (1, 3, 6, 6));
    g_hash_table_insert (o->input_shapes, g_strdup ("x"), g_memdup2 (&s, sizeof s));
  }
  g_assert_cmpuint (rerun (p, o), ==, 1);
  /* And back to the defaults. */
  g_assert_cmpuint (rerun (p, NULL), ==, 1);
  tp_assert_stages_agree (p, 3);
}

/* The final graph's outputs on fixed inputs. */
static GPtrArray *
final_outputs (const FbGraph *graph)
{
  g_autoptr(GPtrArray) inputs = g_ptr_array_new_with_free_func ((GDestroyNotify) fb_tensor_unref);
  g_autoptr(GError) error = NULL;
  GPtrArray *outputs;
  FbTensor *x = fb_tensor_new (FB_DTYPE_FLOAT32, 4, TP_DIMS (1, 3, 6, 6), NULL);

  for (int64_t i = 0; i < x->numel; i++)
    fb_tensor_set_f64 (x, i, (double) (i % 7) - 3.0);
  g_ptr_array_add (inputs, x);
  outputs = fb_interp_run (graph, inputs, NULL, &error);
  g_assert_no_error (error);
  return outputs;
}

static void
assert_same_outputs (GPtrArray *expected, GPtrArray *actual)
{
  g_assert_cmpuint (expected->len, ==, actual->len);
  for (guint k = 0; k < expected->len; k++)
    {
      FbCompare c = { 0 };
      fb_tensor_compare (g_ptr_array_index (expected, k), g_ptr_array_index (actual, k), 0, 0, &c);
      g_assert_true (c.ok);
      fb_compare_clear (&c);
    }
}

/* What a reader thread checks of the stages it holds while the pipeline re-runs elsewhere. */
typedef struct {
  GPtrArray *stages;             /* taken with fb_pipeline_dup_stages; the reader drops them */
  GPtrArray *expected;           /* the outputs of the last stage, computed beforehand */
  gint       stop;
  gint       rounds;
} Reader;

static gpointer
read_stages (gpointer data)
{
  Reader *r = data;

  do
    {
      for (guint i = 0; i < r->stages->len; i++)
        {
          FbStage *s = g_ptr_array_index (r->stages, i);
          g_autoptr(FbGraph) copy = fb_graph_copy (s->graph);
          g_autoptr(GError) error = NULL;

          g_assert_true (fb_graph_verify (s->graph, &error));
          g_assert_cmpuint (fb_graph_count_nodes (s->graph, FALSE), ==, s->nodes_after);
          g_assert_cmpuint (copy->nodes->len, ==, s->graph->nodes->len);
        }
      {
        FbStage *last = g_ptr_array_index (r->stages, r->stages->len - 1);
        g_autoptr(GPtrArray) outputs = final_outputs (last->graph);
        assert_same_outputs (r->expected, outputs);
      }
      g_atomic_int_inc (&r->rounds);
    }
  while (!g_atomic_int_get (&r->stop));
  /* The last references go in this thread, after the pipeline let go of these stages. */
  g_clear_pointer (&r->stages, g_ptr_array_unref);
  return NULL;
}

static void
test_shared_stages (void)
{
  FbPipeline *p = tp_run (small_cnn (), NULL);
  g_autoptr(FbPipelineOptions) o = fb_pipeline_options_new ();
  g_autoptr(GPtrArray) before = fb_pipeline_dup_stages (p);
  g_autoptr(GPtrArray) after = NULL;
  g_autoptr(GPtrArray) expected = final_outputs (fb_pipeline_final (p));
  Reader reader = { fb_pipeline_dup_stages (p), expected, 0, 0 };
  guint n = fb_pipeline_n_stages (p);
  GThread *thread;

  /* A new array of the same stages, in order. */
  g_assert_cmpuint (before->len, ==, n);
  for (guint i = 0; i < n; i++)
    g_assert_true (g_ptr_array_index (before, i) == fb_pipeline_stage (p, i));
  g_assert_true (before != reader.stages);

  /* Toggles re-run the pipeline here while another thread reads the stages it took before. */
  thread = g_thread_new ("reader", read_stages, &reader);
  for (guint round = 0; round < 4; round++)
    {
      g_ptr_array_set_size (o->disabled_passes, 0);
      if (round % 2 == 0)
        g_ptr_array_add (o->disabled_passes, g_strdup ("fuse-epilogue"));
      g_assert_cmpuint (rerun (p, o), ==, 6);
    }
  g_ptr_array_add (o->disabled_passes, g_strdup ("fuse-epilogue"));
  g_assert_cmpuint (rerun (p, o), ==, 6);
  while (g_atomic_int_get (&reader.rounds) == 0)
    g_thread_yield ();
  g_atomic_int_set (&reader.stop, 1);
  g_thread_join (thread);
  g_assert_null (reader.stages);

  /* fuse-epilogue is stage 6: the stages before it are the same objects, the rest are new. */
  after = fb_pipeline_dup_stages (p);
  g_assert_cmpuint (after->len, ==, n);
  for (guint i = 0; i < n; i++)
    {
      FbStage *old = g_ptr_array_index (before, i), *now = g_ptr_array_index (after, i);

      g_assert_cmpstr (old->name, ==, now->name);
      if (i < 6)
        g_assert_true (old == now);
      else
        g_assert_true (old != now && old->graph != now->graph);
    }
  g_assert_false (((FbStage *) g_ptr_array_index (after, 6))->enabled);
  g_assert_true (((FbStage *) g_ptr_array_index (before, 6))->enabled);

  /* The stages taken before outlive the pipeline, and still compute what they did. */
  fb_pipeline_free (p);
  {
    FbStage *old_final = g_ptr_array_index (before, n - 1);
    FbStage *new_final = g_ptr_array_index (after, n - 1);
    g_autoptr(GPtrArray) old_outputs = final_outputs (old_final->graph);

    g_assert_cmpuint (tp_count (old_final->graph, FB_OP_FUSED, FALSE), >, 0);
    g_assert_cmpuint (tp_count (new_final->graph, FB_OP_FUSED, FALSE), ==, 0);
    assert_same_outputs (expected, old_outputs);
  }
}

/* Cancels the run once stage `at` is done. */
typedef struct {
  GCancellable *cancellable;
  guint         at;
} CancelAt;

static void
cancel_at (guint done, guint total, gpointer data)
{
  CancelAt *c = data;

  if (done == c->at + 1)
    g_cancellable_cancel (c->cancellable);
}

static void
test_cancelled_rerun_continues (void)
{
  g_autoptr(FbPipeline) p = tp_run (small_cnn (), NULL);
  g_autoptr(FbPipelineOptions) o = fb_pipeline_options_new ();
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GPtrArray) shown = fb_pipeline_dup_stages (p);
  g_autoptr(GError) error = NULL;
  CancelAt c = { cancellable, 7 };
  guint n = fb_pipeline_n_stages (p);

  /* Stopped after stage 7 of a re-run from stage 3: 0-2 kept, 3-7 new, the rest gone. */
  g_ptr_array_add (o->no_fuse, g_strdup ("relu"));
  g_assert_false (fb_pipeline_run (p, o, cancellable, cancel_at, &c, &error));
  g_assert_error (error, FB_PIPELINE_ERROR, FB_PIPELINE_ERROR_CANCELLED);
  g_assert_cmpuint (fb_pipeline_n_stages (p), ==, 8);
  g_assert_null (fb_pipeline_final (p));
  for (guint i = 0; i < 8; i++)
    g_assert_true ((fb_pipeline_stage (p, i) == g_ptr_array_index (shown, i)) == (i < 3));
  g_assert_cmpuint (fb_pipeline_first_stale (p, o), ==, 8);

  /* What the reader shows is untouched. */
  for (guint i = 0; i < n; i++)
    g_assert_nonnull (((FbStage *) g_ptr_array_index (shown, i))->graph);

  /* The same options go on from the first missing stage... */
  g_assert_cmpuint (rerun (p, o), ==, 8);
  g_assert_cmpuint (fb_pipeline_n_stages (p), ==, n);
  tp_assert_stages_agree (p, 6);
  /* ...and the options of before (the toggle taken back) redo from the first pass that reads
   * them, keeping the stages before. */
  g_assert_cmpuint (rerun (p, NULL), ==, 3);
  for (guint i = 0; i < 3; i++)
    g_assert_true (fb_pipeline_stage (p, i) == g_ptr_array_index (shown, i));
  g_assert_cmpuint (tp_count (fb_pipeline_final (p), FB_OP_FUSED, FALSE), ==,
                    tp_count (((FbStage *) g_ptr_array_index (shown, n - 1))->graph, FB_OP_FUSED, FALSE));
}

static void
test_no_fuse (void)
{
  g_autoptr(FbPipelineOptions) o = fb_pipeline_options_new ();
  FbGraph *final;

  g_ptr_array_add (o->no_fuse, g_strdup ("relu"));
  g_autoptr(FbPipeline) p = tp_run (small_cnn (), o);
  final = fb_pipeline_final (p);
  /* conv1 loses its partner; conv2 still takes its bias. */
  g_assert_cmpuint (tp_count (final, FB_OP_RELU, FALSE), ==, 1);
  g_assert_cmpuint (tp_count (final, FB_OP_CONV, FALSE), ==, 1);
  g_assert_cmpuint (tp_count (final, FB_OP_FUSED, FALSE), ==, 1);
  tp_assert_stages_agree (p, 4);
}

static void
test_layout_nhwc (void)
{
  g_autoptr(FbPipelineOptions) o = fb_pipeline_options_new ();
  FbGraph *g = small_cnn ();
  guint conv1 = node_id (g, "conv1");
  guint n_inserted = 0;
  FbGraph *layout;

  o->layout = FB_LAYOUT_NHWC;
  g_autoptr(FbPipeline) p = tp_run (g, o);
  layout = tp_stage_graph (p, "layout");
  for (guint i = 0; i < layout->nodes->len; i++)
    {
      FbNode *n = g_ptr_array_index (layout->nodes, i);
      if (n->op == FB_OP_FUSED)
        {
          FbGraph *body = fb_node_attr_graph (n, "body");
          FbNode *conv = tp_find (body, FB_OP_CONV);
          g_assert_cmpstr (fb_node_attr_string (conv, FB_ATTR_LAYOUT, ""), ==, "nhwc");
        }
      if (n->flags & FB_NODE_INSERTED)
        {
          n_inserted++;
          g_assert_cmpint (n->op, ==, FB_OP_TRANSPOSE);
          g_assert_cmpuint (n->n_prov, >, 0);
        }
    }
  /* One transpose in, one out; the two convolutions hand NHWC straight to each other. */
  g_assert_cmpuint (n_inserted, ==, 2);
  /* The transpose in serves conv1's group: it carries conv1's original node. */
  {
    FbNode *in = NULL;
    for (guint i = 0; i < layout->nodes->len && in == NULL; i++)
      {
        FbNode *n = g_ptr_array_index (layout->nodes, i);
        if ((n->flags & FB_NODE_INSERTED) && n->inputs[0]->is_input)
          in = n;
      }
    g_assert_nonnull (in);
    g_assert_cmpstr (fb_model_orig_name (layout->model, in->prov[0]), ==, "conv1");
    (void) conv1;
  }
  tp_assert_stages_agree (p, 5);
}

static void
test_unknown_pass_is_an_error (void)
{
  g_autoptr(FbPipeline) p = fb_pipeline_new (small_cnn ());
  g_autoptr(FbPipelineOptions) o = fb_pipeline_options_new ();
  g_autoptr(GError) error = NULL;

  g_ptr_array_add (o->disabled_passes, g_strdup ("fuse-everything"));
  g_assert_false (fb_pipeline_run (p, o, NULL, NULL, NULL, &error));
  g_assert_error (error, FB_PIPELINE_ERROR, FB_PIPELINE_ERROR_OPTION);
  g_assert_nonnull (strstr (error->message, "fuse-everything"));
}

static void
test_cancel (void)
{
  g_autoptr(FbPipeline) p = fb_pipeline_new (small_cnn ());
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GError) error = NULL;

  g_cancellable_cancel (cancellable);
  g_assert_false (fb_pipeline_run (p, NULL, cancellable, NULL, NULL, &error));
  g_assert_error (error, FB_PIPELINE_ERROR, FB_PIPELINE_ERROR_CANCELLED);
}

static void
count_progress (guint done, guint total, gpointer data)
{
  guint *calls = data;
  g_assert_cmpuint (done, <=, total);
  (*calls)++;
}

static void
test_progress (void)
{
  g_autoptr(FbPipeline) p = fb_pipeline_new (small_cnn ());
  g_autoptr(GError) error = NULL;
  guint calls = 0;

  g_assert_true (fb_pipeline_run (p, NULL, NULL, count_progress, &calls, &error));
  g_assert_cmpuint (calls, >=, 9);
}

#ifndef NDEBUG
/* A pass that leaves a value whose shape its producer cannot compute. */
static gboolean
broken_pass (FbPassContext *ctx, FbGraph *graph, GError **error)
{
  FbNode *last = g_ptr_array_index (graph->nodes, graph->nodes->len - 1);
  last->outputs[0]->shape.dim[1] += 7;
  return TRUE;
}

static void
test_verifier_names_the_pass (void)
{
  g_autoptr(FbPipeline) p = fb_pipeline_new (small_cnn ());
  g_autoptr(GError) error = NULL;

  _fb_pipeline_override (p, "cse", broken_pass);
  g_assert_false (fb_pipeline_run (p, NULL, NULL, NULL, NULL, &error));
  g_assert_error (error, FB_PIPELINE_ERROR, FB_PIPELINE_ERROR_PASS);
  g_assert_nonnull (strstr (error->message, "'cse'"));

  /* With the real pass back, the same pipeline runs again from cse on. */
  g_clear_error (&error);
  _fb_pipeline_override (p, "cse", NULL);
  g_assert_true (fb_pipeline_run (p, NULL, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
}
#endif

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/pipeline/stage-names", test_stage_names);
  g_test_add_func ("/pipeline/diff-ids", test_diff_ids);
  g_test_add_func ("/pipeline/rerun-only-later-stages", test_rerun_only_later_stages);
  g_test_add_func ("/pipeline/shared-stages", test_shared_stages);
  g_test_add_func ("/pipeline/cancelled-rerun-continues", test_cancelled_rerun_continues);
  g_test_add_func ("/pipeline/no-fuse", test_no_fuse);
  g_test_add_func ("/pipeline/layout-nhwc", test_layout_nhwc);
  g_test_add_func ("/pipeline/unknown-pass", test_unknown_pass_is_an_error);
  g_test_add_func ("/pipeline/cancel", test_cancel);
  g_test_add_func ("/pipeline/progress", test_progress);
#ifndef NDEBUG
  /* The verifier runs between passes in debug builds only. */
  g_test_add_func ("/pipeline/verifier-names-the-pass", test_verifier_names_the_pass);
#endif
  return g_test_run ();
}

/* SPDX-License-Identifier: GPL-3.0-or-later */
/* graph-view-bench: how fast the graph view shows a large model.
 *
 * Builds a 10,000-node graph with the IR builder (200 transformer-like layers of 50 nodes under
 * "/encoder/layer.K/..."), then measures in a real window:
 *   - the time to the first picture: scope tree, layout (Graphviz, in a worker thread) and the
 *     first frame painted;
 *   - the frame time while panning, from the frame clock's before-paint to after-paint, at the
 *     first picture's zoom, zoomed out to the whole graph, and with every group open.
 * Targets: first picture under 1 s, panning within a 60 Hz frame (16.7 ms).
 *
 * Then the same pans with a profile painted (a kernel per node, heat and badges on every box),
 * alternating with the plain pans as the peer, and the profile panel's timeline drawing 10,000
 * launches, whole and zoomed in, against the same 16.7 ms (60 fps).
 *
 * The profile panel taking the same 10,000-kernel profile: from fb_profile_panel_set_profile to
 * the first frame of the Top Kernels table painted, on a fresh panel and replacing a profile
 * already shown (target: under 1 s; the issue measured 2.5 min when rows went in one by one).
 * `graph-view-bench --profile-panel` runs this part alone.
 *
 * Last, an export shaped like Paddle's: 60 layers where every Add, Div and Reshape reads a
 * Constant node of its own (2 of every 7 nodes), shown with the constants as rows inside the
 * boxes (the default) and as boxes of their own, the peer: the first picture, everything open,
 * and the pans of both.
 *
 * `graph-view-bench --everything-open [NODES] [--varied] [--serial]` times opening every group of
 * a big graph (100,000 nodes by default, the same layers): from the request to the first screen
 * painted with laid-out boxes on it, and to the whole layout done, with the Graphviz runs it
 * took (target: the first screen in under 5 s). --varied gives every block its own structure,
 * so that few groups share a layout and the Graphviz runs are many; --serial lays out one group
 * at a time in this process, without partial scenes, the peer.
 *
 * Run it under a display, e.g. with GSK_RENDERER=cairo as the tests do. */
#include "fb-graph-view.h"
#include "fb-profile-overlay.h"
#include "fb-profile-panel.h"
#include "fb-timeline-view.h"
#include "fb-ui.h"

#include <adwaita.h>
#include <stdio.h>
#include <time.h>

#define N_LAYERS        200
#define N_CONST_LAYERS  60
#define NODES_PER_BLOCK 10
#define PAN_FRAMES      120

static const char *blocks[] = { "attention/self", "attention/output", "intermediate", "output", "norm" };

static FbValue *
add_op (FbGraph    *graph,
        FbOpKind    op,
        const char *name,
        FbValue    *a,
        FbValue    *b)
{
  int64_t dims[] = { 1, 128, 768 };
  FbShape shape = fb_shape_make (3, dims);
  FbNode *node = fb_graph_add_node (graph, op, name, b != NULL ? 2 : 1, 1);
  g_autofree char *value_name = g_strconcat (name, "_output_0", NULL);
  FbValue *out = fb_graph_add_value (graph, value_name, FB_DTYPE_FLOAT32, &shape);

  FbOrigNode orig = { g_strdup (name), g_strdup (fb_op_name (op)) };
  guint prov;

  node->inputs[0] = a;
  if (b != NULL)
    node->inputs[1] = b;
  fb_node_set_output (node, 0, out);
  /* Provenance, as the importer gives it: what a profile's kernels are attributed through. */
  g_array_append_val (graph->model->orig_nodes, orig);
  prov = graph->model->orig_nodes->len - 1;
  fb_node_add_prov (graph, node, &prov, 1);
  return out;
}

/* A Constant node of its own for one use, as paddle2onnx writes them. */
static FbValue *
add_constant (FbGraph    *graph,
              const char *name,
              FbTensor   *tensor)
{
  FbNode *node = fb_graph_add_node (graph, FB_OP_CONSTANT, name, 0, 1);
  g_autofree char *value_name = g_strconcat (name, "_output_0", NULL);
  FbShape shape = fb_tensor_shape (tensor);
  FbValue *out = fb_graph_add_value (graph, value_name, tensor->dtype, &shape);
  FbAttr attr = { .name = "value", .type = FB_ATTR_TENSOR, .t = tensor };

  fb_node_set_attr (graph, node, &attr);
  out->constant = fb_tensor_ref (tensor);
  fb_node_set_output (node, 0, out);
  return out;
}

/* n_layers layers of five blocks; with constants, every Add, Div and Reshape reads a Constant.
 * varied: a binary op inside a block reads a node of the block picked by the block's number, so
 * that blocks and layers differ in structure (few of them can share a layout). */
static FbGraph *
build_graph_full (guint    n_layers,
                  gboolean constants,
                  gboolean varied)
{
  static const FbOpKind ops[NODES_PER_BLOCK] = {
    FB_OP_MATMUL, FB_OP_ADD, FB_OP_RESHAPE, FB_OP_TRANSPOSE, FB_OP_MATMUL,
    FB_OP_DIV, FB_OP_SOFTMAX, FB_OP_MATMUL, FB_OP_TRANSPOSE, FB_OP_ADD,
  };
  g_autoptr(FbModel) model = fb_model_new (NULL);
  FbGraph *graph = fb_graph_new (model);
  int64_t dims[] = { 1, 128, 768 };
  FbShape shape = fb_shape_make (3, dims);
  FbValue *h = fb_graph_add_value (graph, "input_ids", FB_DTYPE_FLOAT32, &shape);
  g_autoptr(FbTensor) scalar = fb_tensor_new_scalar_f32 (0.125f);
  g_autoptr(FbTensor) target = fb_tensor_new (FB_DTYPE_INT64, 1, (int64_t[]) { 3 }, NULL);

  for (guint i = 0; i < 3; i++)
    fb_tensor_set_f64 (target, i, dims[i]);
  h->is_input = TRUE;
  g_ptr_array_add (graph->inputs, h);
  for (guint layer = 0; layer < n_layers; layer++)
    {
      FbValue *residual = h;

      for (guint b = 0; b < G_N_ELEMENTS (blocks); b++)
        {
          FbValue *made[NODES_PER_BLOCK];

          for (guint k = 0; k < NODES_PER_BLOCK; k++)
            {
              g_autofree char *name = g_strdup_printf ("/encoder/layer.%u/%s/%s_%u", layer, blocks[b],
                                                       fb_op_name (ops[k]), k);
              gboolean binary = fb_op_info (ops[k])->min_inputs == 2;
              gboolean last = b == G_N_ELEMENTS (blocks) - 1 && k == NODES_PER_BLOCK - 1;
              FbValue *second = binary ? (last ? residual : h) : NULL;
              guint32 mix = (layer + 1) * 2654435761u ^ (b + 1) * 40503u ^ (k + 1) * 2246822519u;

              mix ^= mix >> 15;
              mix *= 0x2c1b3c6du;
              mix ^= mix >> 12;
              made[k] = h;
              /* Varied: some nodes left out, and binary ops reading an earlier node of the block. */
              if (varied && !last && k > 0 && mix % 5 == 0)
                continue;
              if (varied && binary && !last && k > 1)
                second = made[(mix >> 8) % (k - 1)];
              if (constants && !last && (ops[k] == FB_OP_ADD || ops[k] == FB_OP_DIV || ops[k] == FB_OP_RESHAPE))
                {
                  g_autofree char *const_name = g_strdup_printf ("/encoder/layer.%u/%s/Constant_%u", layer,
                                                                 blocks[b], k);

                  second = add_constant (graph, const_name, ops[k] == FB_OP_RESHAPE ? target : scalar);
                }
              /* The last Add of a layer takes the residual; other binary ops take the layer input. */
              h = made[k] = add_op (graph, ops[k], name, h, second);
            }
        }
    }
  h->is_output = TRUE;
  g_ptr_array_add (graph->outputs, h);
  return graph;
}

static FbGraph *
build_graph_of (guint    n_layers,
                gboolean constants)
{
  return build_graph_full (n_layers, constants, FALSE);
}

static FbGraph *
build_graph (void)
{
  return build_graph_of (N_LAYERS, FALSE);
}

typedef struct {
  GtkWidget *widget;
  gint64     paint_begin;
  gint64     cpu_begin;
  GArray    *frame_us;     /* double, per painted frame: wall time */
  GArray    *cpu_us;       /* the UI thread's CPU time: what the frame costs without the
                              other processes on the machine */
  guint      painted;
} Frames;

static gint64
thread_cpu_us (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return (gint64) ts.tv_sec * G_USEC_PER_SEC + ts.tv_nsec / 1000;
}

static void
on_before_paint (GdkFrameClock *clock,
                 Frames        *frames)
{
  frames->paint_begin = g_get_monotonic_time ();
  frames->cpu_begin = thread_cpu_us ();
}

static void
on_after_paint (GdkFrameClock *clock,
                Frames        *frames)
{
  double us = g_get_monotonic_time () - frames->paint_begin;
  double cpu = thread_cpu_us () - frames->cpu_begin;

  g_array_append_val (frames->frame_us, us);
  g_array_append_val (frames->cpu_us, cpu);
  frames->painted++;
}

static void
wait_painted (Frames *frames,
              guint   n)
{
  guint target = frames->painted + n;

  /* A frame is painted only when something asks for one. */
  while (frames->painted < target)
    {
      gtk_widget_queue_draw (frames->widget);
      g_main_context_iteration (NULL, TRUE);
    }
}

static void
wait_layout (FbGraphView *view)
{
  while (fb_graph_view_is_busy (view) || fb_graph_view_get_scene (view) == NULL)
    g_main_context_iteration (NULL, TRUE);
}

static int
compare_double (gconstpointer a,
                gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return x < y ? -1 : x > y;
}

/* Mean and 95th percentile of times[first..], in ms; returns the 95th percentile. */
static double
report (const char *what,
        GArray     *all,
        guint       first)
{
  g_autoptr(GArray) times = g_array_new (FALSE, FALSE, sizeof (double));
  double sum = 0, p95;

  g_array_append_vals (times, &g_array_index (all, double, first), all->len - first);
  g_array_sort (times, compare_double);
  for (guint i = 0; i < times->len; i++)
    sum += g_array_index (times, double, i);
  p95 = g_array_index (times, double, (guint) (times->len * 0.95));
  printf ("  %s mean %5.2f p95 %5.2f ms%s", what, sum / times->len / 1000, p95 / 1000,
          p95 <= 16667 ? "" : " (over 16.7)");
  return p95 / 1000;
}

/* Pans across the picture one frame at a time and reports the paint times; returns the
 * 95th percentile of the wall time, in ms. */
static double
pan (const char  *label,
     FbGraphView *view,
     Frames      *frames,
     double      *cpu_p95)
{
  double p95, cpu;
  double x, y, zoom;
  guint first;

  fb_graph_view_get_viewport (view, &x, &y, &zoom);
  wait_painted (frames, 2);
  first = frames->frame_us->len;
  for (guint i = 0; i < PAN_FRAMES; i++)
    {
      /* Down and a little across, 12 screen pixels a frame. */
      fb_graph_view_set_viewport (view, x + i * 3 / zoom, y + i * 12 / zoom, zoom);
      wait_painted (frames, 1);
    }
  printf ("  %-28s zoom %4.2f", label, zoom);
  p95 = report ("wall", frames->frame_us, first);
  cpu = report ("cpu", frames->cpu_us, first);
  if (cpu_p95 != NULL)
    *cpu_p95 = cpu;
  printf ("\n");
  fb_graph_view_set_viewport (view, x, y, zoom);
  return p95;
}

/* A profile of graph: a kernel per node, times spread over two orders of magnitude, and a
 * timeline of one launch each on two lanes with a gap before every launch. */
static FbProfile *
make_profile (FbGraph *graph)
{
  FbProfile *profile = fb_profile_new ();
  double t = 0;

  profile->model = g_strdup ("bench");
  profile->target = g_strdup ("cpu");
  profile->device.name = g_strdup ("bench");
  profile->device.peak_gflops = 500;
  profile->device.peak_gbps = 50;
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      FbNode *node = g_ptr_array_index (graph->nodes, i);
      FbProfileKernel *kernel = fb_profile_kernel_new ();
      double share = 1;
      FbProfileSpan span = { 0 };

      kernel->id = i;
      kernel->name = g_strdup_printf ("fbk_%u", i);
      kernel->stage_node = node->id;
      g_ptr_array_add (kernel->nodes, g_strdup (node->name));
      g_array_append_val (kernel->node_shares, share);
      kernel->calls = 1;
      kernel->median_us = kernel->min_us = kernel->max_us = 1 + (i * 7919) % 200;
      kernel->bytes_read = 393216;
      kernel->bytes_written = 393216;
      kernel->flops = node->op == FB_OP_MATMUL ? 1.5e8 : 1e5;
      kernel->bound = node->op == FB_OP_MATMUL ? FB_BOUND_COMPUTE : FB_BOUND_MEMORY;
      kernel->roofline_share = (i % 10) / 10.0;
      g_ptr_array_add (profile->kernels, kernel);
      span.kernel = i;
      span.lane = i % 2;
      span.start_us = t + 0.5;
      span.end_us = span.start_us + kernel->median_us;
      t = span.end_us;
      g_array_append_val (profile->timeline, span);
    }
  profile->wall_median_ms = profile->wall_min_ms = profile->wall_max_ms = t / 1000;
  profile->busy_ms = fb_profile_total_us (profile) / 1000;
  return profile;
}

static double
load_average (void)
{
  g_autofree char *text = NULL;

  if (!g_file_get_contents ("/proc/loadavg", &text, NULL, NULL))
    return -1;
  return g_ascii_strtod (text, NULL);
}

/* The same pan without and with the profile painted, alternating, twice each. */
static void
pan_with_profile (const char  *label,
                  FbGraphView *view,
                  Frames      *frames,
                  FbProfile   *profile)
{
  double plain = 0, painted = 0, plain_cpu = 0, painted_cpu = 0, p95, cpu;

  for (guint round = 0; round < 2; round++)
    {
      g_autofree char *a = g_strdup_printf ("%s, plain", label);
      g_autofree char *b = g_strdup_printf ("%s, profile", label);

      fb_graph_view_set_profile (view, NULL, NULL);
      p95 = pan (a, view, frames, &cpu);
      plain = MAX (plain, p95);
      plain_cpu = MAX (plain_cpu, cpu);
      fb_graph_view_set_profile (view, profile, NULL);
      p95 = pan (b, view, frames, &cpu);
      painted = MAX (painted, p95);
      painted_cpu = MAX (painted_cpu, cpu);
    }
  printf ("  => p95 with the profile: wall %.2f ms (%s 16.7, %.2fx the plain pan), UI thread cpu %.2f ms "
          "(%s 16.7, %.2fx); load average %.2f\n",
          painted, painted <= 16.667 ? "within" : "over", plain > 0 ? painted / plain : 0,
          painted_cpu, painted_cpu <= 16.667 ? "within" : "over", plain_cpu > 0 ? painted_cpu / plain_cpu : 0,
          load_average ());
}

static gboolean
count_tick (GtkWidget     *widget,
            GdkFrameClock *clock,
            gpointer       data)
{
  (*(guint *) data)++;
  return G_SOURCE_CONTINUE;
}

/* Milliseconds from handing profile to the panel to the end of the second frame after it (the
 * first one drawn wholly with the new rows); *call_ms: the call alone, *call_cpu_ms: the UI
 * thread's CPU time in it (what it costs without the other processes on the machine). */
static double
show_profile (FbProfilePanel *panel,
              FbProfile      *profile,
              double         *call_ms,
              double         *call_cpu_ms)
{
  guint ticks = 0;
  guint id = gtk_widget_add_tick_callback (GTK_WIDGET (panel), count_tick, &ticks, NULL);
  gint64 t0 = g_get_monotonic_time ();
  gint64 cpu0 = thread_cpu_us ();

  fb_profile_panel_set_profile (panel, profile, NULL);
  *call_ms = (g_get_monotonic_time () - t0) / 1000.0;
  *call_cpu_ms = (thread_cpu_us () - cpu0) / 1000.0;
  while (ticks < 2)
    {
      gtk_widget_queue_draw (GTK_WIDGET (panel));
      g_main_context_iteration (NULL, TRUE);
    }
  gtk_widget_remove_tick_callback (GTK_WIDGET (panel), id);
  return (g_get_monotonic_time () - t0) / 1000.0;
}

static void
bench_profile_panel (FbProfile *profile)
{
  GtkWidget *window = gtk_window_new ();
  FbProfilePanel *panel = FB_PROFILE_PANEL (fb_profile_panel_new ());
  double call, cpu, shown;

  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 500);
  gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (panel));
  fb_profile_panel_set_page (panel, "kernels");
  gtk_window_present (GTK_WINDOW (window));
  while (gtk_widget_get_width (GTK_WIDGET (panel)) == 0)
    g_main_context_iteration (NULL, TRUE);

  printf ("\nProfile panel, Top Kernels page, %u kernels (load average %.2f)\n", profile->kernels->len,
          load_average ());
  shown = show_profile (panel, profile, &call, &cpu);
  printf ("  %-22s set_profile %7.1f ms (UI thread cpu %6.1f ms), on screen %7.1f ms (target 1000)\n",
          "fresh panel", call, cpu, shown);
  /* The table has rows now, scrolled away from the top: the next profile replaces them. */
  gtk_adjustment_set_value (gtk_scrollable_get_vadjustment (GTK_SCROLLABLE (fb_profile_panel_get_kernel_table (panel))),
                            1000);
  shown = show_profile (panel, profile, &call, &cpu);
  printf ("  %-22s set_profile %7.1f ms (UI thread cpu %6.1f ms), on screen %7.1f ms (target 1000)\n",
          "replacing a profile", call, cpu, shown);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The timeline of 10,000 launches: the whole inference on screen (almost every launch under a
 * pixel, merged), then zoomed 50x and panned across. */
static void
bench_timeline (FbProfile *profile)
{
  GtkWidget *window = gtk_window_new ();
  FbTimelineView *timeline = FB_TIMELINE_VIEW (fb_timeline_view_new ());
  Frames frames = { 0 };
  GdkFrameClock *clock;
  double start, end, width;
  guint first;

  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 200);
  gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (timeline));
  fb_timeline_view_set_profile (timeline, profile);
  gtk_window_present (GTK_WINDOW (window));
  while (gtk_widget_get_width (GTK_WIDGET (timeline)) == 0)
    g_main_context_iteration (NULL, TRUE);
  clock = gtk_widget_get_frame_clock (GTK_WIDGET (timeline));
  frames.widget = GTK_WIDGET (timeline);
  frames.frame_us = g_array_new (FALSE, FALSE, sizeof (double));
  frames.cpu_us = g_array_new (FALSE, FALSE, sizeof (double));
  g_signal_connect (clock, "before-paint", G_CALLBACK (on_before_paint), &frames);
  g_signal_connect (clock, "after-paint", G_CALLBACK (on_after_paint), &frames);
  wait_painted (&frames, 2);

  printf ("\nTimeline of %u launches on 2 lanes (load average %.2f)\n", profile->timeline->len, load_average ());
  fb_timeline_view_get_range (timeline, &start, &end);
  first = frames.frame_us->len;
  for (guint i = 0; i < PAN_FRAMES; i++)
    {
      /* The whole inference, nudged a little each frame so that every frame draws anew. */
      fb_timeline_view_set_range (timeline, start + (i % 2) * 0.01, end + (i % 2) * 0.01);
      wait_painted (&frames, 1);
    }
  printf ("  %-28s %5u rects", "whole inference", fb_timeline_view_get_n_drawn (timeline));
  report ("wall", frames.frame_us, first);
  report ("cpu", frames.cpu_us, first);
  printf ("\n");
  width = (end - start) / 50;
  first = frames.frame_us->len;
  for (guint i = 0; i < PAN_FRAMES; i++)
    {
      double s = start + (end - start - width) * i / PAN_FRAMES;

      fb_timeline_view_set_range (timeline, s, s + width);
      wait_painted (&frames, 1);
    }
  printf ("  %-28s %5u rects", "zoomed 50x, panning", fb_timeline_view_get_n_drawn (timeline));
  report ("wall", frames.frame_us, first);
  report ("cpu", frames.cpu_us, first);
  printf ("\n");
  g_array_unref (frames.frame_us);
  g_array_unref (frames.cpu_us);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Shows view alone in window at 1280x800 and counts its frames into frames. */
static void
present_view (GtkWidget   *window,
              FbGraphView *view,
              Frames      *frames)
{
  GdkFrameClock *clock;

  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
  gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (view));
  gtk_window_present (GTK_WINDOW (window));
  while (gtk_widget_get_width (GTK_WIDGET (view)) == 0)
    g_main_context_iteration (NULL, TRUE);
  clock = gtk_widget_get_frame_clock (GTK_WIDGET (view));
  frames->widget = GTK_WIDGET (view);
  frames->frame_us = g_array_new (FALSE, FALSE, sizeof (double));
  frames->cpu_us = g_array_new (FALSE, FALSE, sizeof (double));
  g_signal_connect (clock, "before-paint", G_CALLBACK (on_before_paint), frames);
  g_signal_connect (clock, "after-paint", G_CALLBACK (on_after_paint), frames);
}

/* The Paddle-shaped export in one drawing of its constants: the first picture, panning it,
 * everything open, and panning that. */
static void
bench_constants_as (FbGraph          *graph,
                    FbGraphConstants  constants)
{
  GtkWidget *window = gtk_window_new ();
  FbGraphView *view = FB_GRAPH_VIEW (fb_graph_view_new ());
  g_autoptr(FbGraphLayout) layout = NULL;
  g_autoptr(GHashTable) all = NULL;
  Frames frames = { 0 };
  gint64 t0, t_tree, t_layout, t_paint;
  GHashTableIter iter;
  gpointer path;

  present_view (window, view, &frames);
  wait_painted (&frames, 1);

  t0 = g_get_monotonic_time ();
  layout = fb_graph_layout_new_full (graph, NULL, NULL, constants);
  t_tree = g_get_monotonic_time ();
  fb_graph_view_set_layout (view, layout);
  wait_layout (view);
  t_layout = g_get_monotonic_time ();
  wait_painted (&frames, 1);
  t_paint = g_get_monotonic_time ();
  printf ("  %s\n", constants == FB_GRAPH_CONSTANTS_AS_ROWS ? "constants as rows (the default)"
                                                              : "constants as nodes (the peer)");
  printf ("    first picture        %5u boxes %8.1f ms (tree %.1f, layout %.1f, frame %.1f)\n",
          fb_graph_scene_n_items (fb_graph_view_get_scene (view)), (t_paint - t0) / 1000.0,
          (t_tree - t0) / 1000.0, (t_layout - t_tree) / 1000.0, (t_paint - t_layout) / 1000.0);
  pan ("  first picture", view, &frames, NULL);

  all = fb_graph_layout_default_expansion (layout, G_MAXUINT);
  t0 = g_get_monotonic_time ();
  g_hash_table_iter_init (&iter, all);
  while (g_hash_table_iter_next (&iter, &path, NULL))
    fb_graph_view_set_group_expanded (view, path, TRUE);
  wait_layout (view);
  t_layout = g_get_monotonic_time ();
  wait_painted (&frames, 1);
  t_paint = g_get_monotonic_time ();
  printf ("    everything open      %5u boxes %8.1f ms (layout %.1f, frame %.1f; %u Graphviz runs)\n",
          fb_graph_scene_n_items (fb_graph_view_get_scene (view)), (t_paint - t0) / 1000.0,
          (t_layout - t0) / 1000.0, (t_paint - t_layout) / 1000.0, fb_graph_layout_n_dot_runs (layout));
  fb_graph_view_set_viewport (view, 0, 0, 1.0);
  pan ("  everything open, zoom 1", view, &frames, NULL);

  g_array_unref (frames.frame_us);
  g_array_unref (frames.cpu_us);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Whether the viewport shows a node's box: a picture, not frames, placeholders or nothing. */
static gboolean
shows_nodes (FbGraphView *view)
{
  FbGraphScene *scene = fb_graph_view_get_scene (view);
  double x0, y0, zoom, x1, y1;

  if (scene == NULL)
    return FALSE;
  fb_graph_view_get_viewport (view, &x0, &y0, &zoom);
  x1 = x0 + gtk_widget_get_width (GTK_WIDGET (view)) / zoom;
  y1 = y0 + gtk_widget_get_height (GTK_WIDGET (view)) / zoom;
  for (guint i = 0; i < fb_graph_scene_n_items (scene); i++)
    {
      const FbSceneItem *item = fb_graph_scene_item (scene, i);

      if (item->kind == FB_SCENE_ITEM_NODE && item->x < x1 && item->x + item->width > x0
          && item->y < y1 && item->y + item->height > y0)
        return TRUE;
    }
  return FALSE;
}

/* Every group of a graph of n_nodes opened at once, as the window's "everything open" does it:
 * the first screen of boxes painted, then the whole layout. */
static void
bench_everything_open (guint    n_nodes,
                       gboolean varied,
                       gboolean serial)
{
  /* Varied blocks leave a fifth of their nodes out. */
  guint n_layers = MAX (1, n_nodes / (NODES_PER_BLOCK * G_N_ELEMENTS (blocks)) * (varied ? 5 : 4) / 4);
  g_autoptr(FbGraph) graph = build_graph_full (n_layers, FALSE, varied);
  g_autoptr(FbGraphLayout) layout = NULL;
  g_autoptr(GHashTable) all = NULL;
  g_autoptr(FbGraphScene) before = NULL;
  GtkWidget *window = gtk_window_new ();
  FbGraphView *view = FB_GRAPH_VIEW (fb_graph_view_new ());
  Frames frames = { 0 };
  GHashTableIter iter;
  gpointer path;
  gint64 t0, t_asked, t_first = 0, t_done = 0;
  guint runs0, frames0;
  double dot0;

  present_view (window, view, &frames);

  printf ("Everything open: %u nodes%s%s, %u processors, load average %.2f\n", graph->nodes->len,
          varied ? ", blocks of varied structure" : "", serial ? ", serial layout" : "",
          g_get_num_processors (), load_average ());
  t0 = g_get_monotonic_time ();
  layout = fb_graph_layout_new (graph, NULL, NULL);
  fb_graph_layout_set_serial (layout, serial);
  fb_graph_view_set_layout (view, layout);
  wait_layout (view);
  wait_painted (&frames, 1);
  printf ("  first picture (default groups) %8.2f s, %u Graphviz runs\n",
          (g_get_monotonic_time () - t0) / 1e6, fb_graph_layout_n_dot_runs (layout));

  before = fb_graph_scene_ref (fb_graph_view_get_scene (view));
  runs0 = fb_graph_layout_n_dot_runs (layout);
  dot0 = fb_graph_layout_dot_seconds (layout);
  all = fb_graph_layout_default_expansion (layout, G_MAXUINT);
  t0 = g_get_monotonic_time ();
  g_hash_table_iter_init (&iter, all);
  while (g_hash_table_iter_next (&iter, &path, NULL))
    fb_graph_view_set_group_expanded (view, path, TRUE);
  t_asked = g_get_monotonic_time ();
  frames0 = frames.frame_us->len;
  /* The main loop runs as it would for a user: the frames it paints meanwhile are what the user
     sees, and how long they take says whether the window stays responsive. */
  while (t_done == 0)
    {
      gtk_widget_queue_draw (GTK_WIDGET (view));
      g_main_context_iteration (NULL, TRUE);
      if (t_first == 0 && fb_graph_view_get_scene (view) != before && shows_nodes (view))
        {
          wait_painted (&frames, 1);
          t_first = g_get_monotonic_time ();
        }
      if (t_first != 0 && !fb_graph_view_is_busy (view) && fb_graph_view_get_scene (view) != NULL)
        {
          wait_painted (&frames, 1);
          t_done = g_get_monotonic_time ();
        }
    }
  printf ("  everything open: %u groups asked for in %.2f s\n", g_hash_table_size (all), (t_asked - t0) / 1e6);
  printf ("    first screen of boxes painted %8.2f s  (%s the 5 s target)\n", (t_first - t0) / 1e6,
          t_first - t0 < 5 * G_USEC_PER_SEC ? "within" : "over");
  printf ("    whole layout done, painted    %8.2f s  (%u boxes)\n", (t_done - t0) / 1e6,
          fb_graph_scene_n_items (fb_graph_view_get_scene (view)));
  printf ("    Graphviz runs %u taking %.2f s (%.2f ms a run); %u groups placed from an identical one\n",
          fb_graph_layout_n_dot_runs (layout) - runs0, fb_graph_layout_dot_seconds (layout) - dot0,
          fb_graph_layout_n_dot_runs (layout) > runs0
            ? (fb_graph_layout_dot_seconds (layout) - dot0) * 1000 / (fb_graph_layout_n_dot_runs (layout) - runs0) : 0,
          fb_graph_layout_n_reused (layout));
  if (frames.frame_us->len > frames0)
    {
      printf ("    %u frames painted meanwhile:", frames.frame_us->len - frames0);
      report ("wall", frames.frame_us, frames0);
      printf ("\n");
    }
  g_array_unref (frames.frame_us);
  g_array_unref (frames.cpu_us);
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
bench_constants (void)
{
  g_autoptr(FbGraph) graph = build_graph_of (N_CONST_LAYERS, TRUE);
  guint n_constants = 0;

  for (guint i = 0; i < graph->nodes->len; i++)
    n_constants += ((FbNode *) g_ptr_array_index (graph->nodes, i))->op == FB_OP_CONSTANT;
  printf ("\nAn export with Constant nodes: %u nodes, %u of them Constants (load average %.2f)\n",
          graph->nodes->len, n_constants, load_average ());
  bench_constants_as (graph, FB_GRAPH_CONSTANTS_AS_NODES);
  bench_constants_as (graph, FB_GRAPH_CONSTANTS_AS_ROWS);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(FbGraph) graph = NULL;
  g_autoptr(FbGraphLayout) layout = NULL;
  g_autoptr(GHashTable) all = NULL;
  FbGraphScene *scene;
  GtkWidget *window;
  FbGraphView *view;
  GdkFrameClock *clock;
  Frames frames = { 0 };
  gint64 t0, t_tree, t_layout, t_paint;
  guint items;

  setvbuf (stdout, NULL, _IOLBF, 0);
  gtk_init ();
  adw_init ();
  fb_ui_init ();

  if (argc > 1 && g_str_equal (argv[1], "--everything-open"))
    {
      guint n_nodes = 100000;
      gboolean varied = FALSE, serial = FALSE;

      for (int i = 2; i < argc; i++)
        if (g_str_equal (argv[i], "--varied"))
          varied = TRUE;
        else if (g_str_equal (argv[i], "--serial"))
          serial = TRUE;
        else
          n_nodes = (guint) g_ascii_strtoull (argv[i], NULL, 10);
      bench_everything_open (n_nodes, varied, serial);
      return 0;
    }
  graph = build_graph ();
  if (argc > 1 && g_str_equal (argv[1], "--profile-panel"))
    {
      g_autoptr(FbProfile) profile = make_profile (graph);

      bench_profile_panel (profile);
      return 0;
    }
  printf ("graph-view-bench: %u nodes, %u layers under /encoder\n\n", graph->nodes->len, N_LAYERS);

  window = gtk_window_new ();
  gtk_window_set_default_size (GTK_WINDOW (window), 1280, 800);
  view = FB_GRAPH_VIEW (fb_graph_view_new ());
  gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (view));
  gtk_window_present (GTK_WINDOW (window));
  while (gtk_widget_get_width (GTK_WIDGET (view)) == 0)
    g_main_context_iteration (NULL, TRUE);
  clock = gtk_widget_get_frame_clock (GTK_WIDGET (view));
  frames.frame_us = g_array_new (FALSE, FALSE, sizeof (double));
  frames.widget = GTK_WIDGET (view);
  frames.cpu_us = g_array_new (FALSE, FALSE, sizeof (double));
  g_signal_connect (clock, "before-paint", G_CALLBACK (on_before_paint), &frames);
  g_signal_connect (clock, "after-paint", G_CALLBACK (on_after_paint), &frames);
  wait_painted (&frames, 1);

  /* The first picture, as the window shows a freshly opened model. */
  t0 = g_get_monotonic_time ();
  layout = fb_graph_layout_new (graph, NULL, NULL);
  t_tree = g_get_monotonic_time ();
  fb_graph_view_set_layout (view, layout);
  wait_layout (view);
  t_layout = g_get_monotonic_time ();
  wait_painted (&frames, 1);
  t_paint = g_get_monotonic_time ();
  scene = fb_graph_view_get_scene (view);
  printf ("First picture (%u boxes, %u Graphviz runs)\n", fb_graph_scene_n_items (scene),
          fb_graph_layout_n_dot_runs (layout));
  printf ("  scope tree           %8.1f ms\n", (t_tree - t0) / 1000.0);
  printf ("  layout (worker)      %8.1f ms\n", (t_layout - t_tree) / 1000.0);
  printf ("  first frame          %8.1f ms\n", (t_paint - t_layout) / 1000.0);
  printf ("  total                %8.1f ms  (%s the 1 s target)\n\n", (t_paint - t0) / 1000.0,
          t_paint - t0 < G_USEC_PER_SEC ? "within" : "over");

  printf ("Panning\n");
  pan ("first picture", view, &frames, NULL);
  /* All of it on screen: Ctrl+0 fits a graph this tall to its width instead, so the zoom that
     shows all of it is set by hand. */
  {
    double width, height, zoom;

    fb_graph_scene_get_bounds (scene, &width, &height);
    zoom = 0.96 * MIN (gtk_widget_get_width (GTK_WIDGET (view)) / width,
                       gtk_widget_get_height (GTK_WIDGET (view)) / height);
    fb_graph_view_set_viewport (view, 0, 0, zoom);
  }
  pan ("whole graph", view, &frames, NULL);

  /* Every group open: 10,000 boxes, each group laid out on its own. */
  all = fb_graph_layout_default_expansion (layout, G_MAXUINT);
  t0 = g_get_monotonic_time ();
  {
    GHashTableIter iter;
    gpointer path;

    g_hash_table_iter_init (&iter, all);
    while (g_hash_table_iter_next (&iter, &path, NULL))
      fb_graph_view_set_group_expanded (view, path, TRUE);
  }
  wait_layout (view);
  t_layout = g_get_monotonic_time ();
  wait_painted (&frames, 1);
  t_paint = g_get_monotonic_time ();
  scene = fb_graph_view_get_scene (view);
  items = fb_graph_scene_n_items (scene);
  printf ("\nEverything open (%u boxes, %u Graphviz runs in all)\n", items, fb_graph_layout_n_dot_runs (layout));
  printf ("  layout (worker)      %8.1f ms\n", (t_layout - t0) / 1000.0);
  printf ("  first frame          %8.1f ms\n", (t_paint - t_layout) / 1000.0);
  fb_graph_view_set_viewport (view, 0, 0, 1.0);
  pan ("everything open, zoom 1", view, &frames, NULL);
  fb_graph_view_set_viewport (view, 0, 0, 0.25);
  pan ("everything open, zoom 0.25", view, &frames, NULL);

  /* Opening one more group again costs only what changed: everything else is cached. */
  {
    guint runs = fb_graph_layout_n_dot_runs (layout);

    fb_graph_view_set_group_expanded (view, "/encoder/layer.7", FALSE);
    wait_layout (view);
    t0 = g_get_monotonic_time ();
    fb_graph_view_set_group_expanded (view, "/encoder/layer.7", TRUE);
    wait_layout (view);
    printf ("\nFolding and reopening one layer: %u Graphviz runs; reopening took %.1f ms\n",
            fb_graph_layout_n_dot_runs (layout) - runs, (g_get_monotonic_time () - t0) / 1000.0);
  }

  /* A profile painted on all of it. */
  {
    g_autoptr(FbProfile) profile = make_profile (graph);
    gint64 t_attr = g_get_monotonic_time ();
    g_autoptr(GHashTable) costs = fb_profile_attribute (profile, graph);

    printf ("\nWith a profile painted (%u kernels; attributing them took %.1f ms)\n", profile->kernels->len,
            (g_get_monotonic_time () - t_attr) / 1000.0);
    fb_graph_view_set_viewport (view, 0, 0, 1.0);
    pan_with_profile ("everything open, zoom 1", view, &frames, profile);
    fb_graph_view_set_viewport (view, 0, 0, 0.25);
    pan_with_profile ("everything open, zoom 0.25", view, &frames, profile);
    fb_graph_view_set_profile (view, NULL, NULL);
    bench_timeline (profile);
    bench_profile_panel (profile);
  }
  bench_constants ();

  g_array_unref (frames.frame_us);
  g_array_unref (frames.cpu_us);
  gtk_window_destroy (GTK_WINDOW (window));
  return 0;
}

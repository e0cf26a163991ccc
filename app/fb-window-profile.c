/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The profile on the window: opening a profile file (Open Profile…, `--profile FILE`), checking
 * that it was recorded for the model and the toggles on screen (fb_profile_matches), painting it
 * on both graph views and the profile panel, A/B against the profile before, and turning what
 * the user picks in the panel into a node of the stage on screen. Making a profile (the Profile
 * button) is fb-window-profile-run.c. */
#include "fb-profile-format.h"
#include "fb-window-private.h"

#include <math.h>

typedef struct {
  GFile *file;
  char  *title;
} OpenJob;

static void
open_job_free (gpointer data)
{
  OpenJob *job = data;

  g_clear_object (&job->file);
  g_free (job->title);
  g_free (job);
}

FbProfile *
fb_window_get_profile (FbWindow *self)
{
  g_return_val_if_fail (FB_IS_WINDOW (self), NULL);
  return self->profile;
}

FbProfile *
fb_window_get_previous_profile (FbWindow *self)
{
  g_return_val_if_fail (FB_IS_WINDOW (self), NULL);
  return self->profile_painted ? self->previous_profile : NULL;
}

gboolean
fb_window_is_profile_painted (FbWindow *self)
{
  g_return_val_if_fail (FB_IS_WINDOW (self), FALSE);
  return self->profile_painted;
}

FbProfilePanel *
fb_window_get_profile_panel (FbWindow *self)
{
  g_return_val_if_fail (FB_IS_WINDOW (self), NULL);
  return self->profile_panel;
}

static GSettings *
settings_of (FbWindow *self)
{
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));

  return app != NULL ? fb_application_get_settings (FB_APPLICATION (app)) : NULL;
}

static FbGraphView *
view (FbWindow *self,
      gboolean  before)
{
  return before ? fb_compare_view_get_before_view (self->compare_view)
                : fb_compare_view_get_after_view (self->compare_view);
}

static gboolean
same_shapes (GHashTable *a,
             GHashTable *b)
{
  GHashTableIter it;
  gpointer key, value;

  if (g_hash_table_size (a) != g_hash_table_size (b))
    return FALSE;
  g_hash_table_iter_init (&it, a);
  while (g_hash_table_iter_next (&it, &key, &value))
    {
      const FbShape *other = g_hash_table_lookup (b, key);

      if (other == NULL || !fb_shape_equal (value, other))
        return FALSE;
    }
  return TRUE;
}

/* A profile made on a model with dynamic dimensions ran with concrete shapes (pinned with
 * --input-shape, or its inputs'). When only those differ from the run on screen, and they fit
 * the model, the pipeline runs again with them (TRUE): once it has, the profile matches and is
 * painted. Otherwise FALSE, with *error saying why when the shapes do not fit. */
static gboolean
take_profile_shapes (FbWindow  *self,
                     FbStage   *import,
                     GError   **error)
{
  const FbPipelineOptions *now = fb_run_get_options (self->run);
  g_autoptr(FbPipelineOptions) pinned = NULL;

  if (self->profile->pipeline == NULL
      || same_shapes (now->input_shapes, self->profile->pipeline->input_shapes)
      || !fb_profile_matches (self->profile, import->graph->model, NULL, NULL))
    return FALSE;
  if ((pinned = fb_profile_pinned_options (self->profile, import->graph, now, error)) == NULL
      || !fb_profile_matches (self->profile, import->graph->model, pinned, NULL))
    return FALSE;
  g_hash_table_remove_all (self->options->input_shapes);
  {
    GHashTableIter it;
    gpointer key, value;

    g_hash_table_iter_init (&it, pinned->input_shapes);
    while (g_hash_table_iter_next (&it, &key, &value))
      g_hash_table_insert (self->options->input_shapes, g_strdup (key),
                           g_memdup2 (value, sizeof (FbShape)));
  }
  _fb_window_rerun (self);
  return TRUE;
}

/* Where it opens, how high, and how it folds: fb-window-panes.c. */
static void
show_panel (FbWindow *self)
{
  gtk_widget_set_visible (GTK_WIDGET (self->profile_panel), TRUE);
}

/* Paints the profile when it fits what is on screen; says why not when it does not. explain:
 * also as an error (a profile the user just opened), not only in the panel. */
static void
repaint (FbWindow *self,
         gboolean  explain)
{
  g_autoptr(GError) error = NULL;
  FbProfile *previous = NULL;
  FbStage *import;

  self->profile_painted = FALSE;
  if (self->profile == NULL)
    {
      fb_graph_view_set_profile (view (self, FALSE), NULL, NULL);
      fb_graph_view_set_profile (view (self, TRUE), NULL, NULL);
      fb_profile_panel_set_profile (self->profile_panel, NULL, NULL);
      gtk_widget_set_visible (GTK_WIDGET (self->profile_panel), FALSE);
      return;
    }
  show_panel (self);
  /* Until the model's passes have run there is nothing to check it against. */
  if (self->run == NULL)
    return;
  import = fb_run_get_stage (self->run, 0);
  fb_profile_panel_set_model (self->profile_panel, import->graph->model);
  /* Only for a profile just opened: a toggle the user changed afterwards stays theirs. */
  if (explain && take_profile_shapes (self, import, &error))
    {
      fb_graph_view_set_profile (view (self, FALSE), NULL, NULL);
      fb_graph_view_set_profile (view (self, TRUE), NULL, NULL);
      fb_profile_panel_set_profile (self->profile_panel, self->profile, NULL);
      fb_profile_panel_set_note (self->profile_panel,
                                 "Running the passes with the input shapes the profile was "
                                 "recorded with…");
      self->profile_pending = TRUE;
      return;
    }
  if (error != NULL
      || !fb_profile_matches (self->profile, import->graph->model, fb_run_get_options (self->run),
                              &error))
    {
      g_autofree char *note = g_strdup_printf ("Not painted: %s", error->message);

      fb_graph_view_set_profile (view (self, FALSE), NULL, NULL);
      fb_graph_view_set_profile (view (self, TRUE), NULL, NULL);
      fb_profile_panel_set_profile (self->profile_panel, self->profile, NULL);
      fb_profile_panel_set_note (self->profile_panel, note);
      if (explain)
        _fb_window_show_error (self, error->message);
      return;
    }
  /* A/B: the profile before, of the same model, whatever pipeline it was recorded with. */
  if (self->previous_profile != NULL && self->compare_previous
      && g_strcmp0 (self->previous_profile->model_digest, self->profile->model_digest) == 0)
    previous = self->previous_profile;
  fb_graph_view_set_profile (view (self, FALSE), self->profile, previous);
  fb_graph_view_set_profile (view (self, TRUE), self->profile, previous);
  fb_profile_panel_set_profile (self->profile_panel, self->profile, previous);
  fb_profile_panel_set_note (self->profile_panel, NULL);
  self->profile_painted = TRUE;
  /* A profile just opened: the panel took some of the panes' height, and the stage opens on
     what its pass changed, painted. */
  if (explain)
    fb_compare_view_show_changes (self->compare_view);
}

void
_fb_window_set_profile (FbWindow  *self,
                        FbProfile *profile)
{
  g_return_if_fail (profile != NULL);

  if (profile == self->profile)
    return;
  /* The profile on screen becomes the one the new one is compared with. */
  if (self->profile != NULL)
    {
      g_clear_pointer (&self->previous_profile, fb_profile_unref);
      self->previous_profile = g_steal_pointer (&self->profile);
    }
  self->profile = fb_profile_ref (profile);
  self->compare_previous = TRUE;
  repaint (self, TRUE);
}

void
fb_window_clear_profile (FbWindow *self)
{
  g_return_if_fail (FB_IS_WINDOW (self));

  g_clear_pointer (&self->profile, fb_profile_unref);
  g_clear_pointer (&self->previous_profile, fb_profile_unref);
  repaint (self, FALSE);
}

void
_fb_window_profile_run_changed (FbWindow *self)
{
  /* Another model: its profiles mean nothing for this one. */
  if (self->run == NULL && self->runner != NULL && self->profile != NULL && self->profile_pending == FALSE)
    {
      g_clear_pointer (&self->profile, fb_profile_unref);
      g_clear_pointer (&self->previous_profile, fb_profile_unref);
    }
  repaint (self, self->profile_pending);
  if (self->run != NULL)
    self->profile_pending = FALSE;
}

static void
open_thread (GTask        *task,
             gpointer      source_object,
             gpointer      task_data,
             GCancellable *cancellable)
{
  OpenJob *job = task_data;
  g_autofree char *path = g_file_get_path (job->file);
  GError *error = NULL;
  FbProfile *profile;

  if (path != NULL)
    profile = fb_profile_load (path, &error);
  else
    {
      g_autoptr(GBytes) bytes = g_file_load_bytes (job->file, cancellable, NULL, &error);

      profile = bytes != NULL ? fb_profile_load_bytes (bytes, job->title, &error) : NULL;
    }
  if (profile == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, profile, (GDestroyNotify) fb_profile_unref);
}

static void
on_opened (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  FbWindow *self = FB_WINDOW (source);
  g_autoptr(GError) error = NULL;
  g_autoptr(FbProfile) profile = g_task_propagate_pointer (G_TASK (result), &error);

  if (self->disposed)
    return;
  if (profile == NULL)
    {
      _fb_window_show_error (self, error->message);
      return;
    }
  /* A model still loading: checked and painted when its passes have run. */
  self->profile_pending = self->run == NULL || self->load_cancellable != NULL;
  if (self->profile_pending)
    {
      g_clear_pointer (&self->profile, fb_profile_unref);
      self->profile = g_steal_pointer (&profile);
      show_panel (self);
      return;
    }
  _fb_window_set_profile (self, profile);
}

void
fb_window_open_profile (FbWindow *self,
                        GFile    *file)
{
  g_autoptr(GTask) task = NULL;
  OpenJob *job;

  g_return_if_fail (FB_IS_WINDOW (self));
  g_return_if_fail (G_IS_FILE (file));

  job = g_new0 (OpenJob, 1);
  job->file = g_object_ref (file);
  job->title = g_file_get_basename (file);
  task = g_task_new (self, NULL, on_opened, NULL);
  g_task_set_source_tag (task, fb_window_open_profile);
  g_task_set_task_data (task, job, open_job_free);
  g_task_run_in_thread (task, open_thread);
}

static void
open_profile_action (GtkWidget  *widget,
                     const char *action_name,
                     GVariant   *parameter)
{
  FbWindow *self = FB_WINDOW (widget);

  _fb_window_choose_file (self, &self->profile_chooser, "Open a Profile",
                          "Fusebench profiles (JSON)", "*.json", "application/json",
                          fb_window_open_profile);
}

static void
compare_previous_action (GtkWidget  *widget,
                         const char *action_name,
                         GVariant   *parameter)
{
  FbWindow *self = FB_WINDOW (widget);

  self->compare_previous = !self->compare_previous;
  repaint (self, FALSE);
}

/* The original node's index in model, or G_MAXUINT. */
static guint
original_index (FbModel    *model,
                const char *name)
{
  for (guint i = 0; i < model->orig_nodes->len; i++)
    if (g_strcmp0 (g_array_index (model->orig_nodes, FbOrigNode, i).name, name) == 0)
      return i;
  return G_MAXUINT;
}

static gboolean
holds (const FbNode *node,
       guint         orig)
{
  for (guint p = 0; p < node->n_prov; p++)
    if (node->prov[p] == orig)
      return TRUE;
  return FALSE;
}

/* The node of graph that carries most of these original nodes (weighted by shares, may be
 * NULL): where a kernel's cost lands on this stage. */
static FbNode *
node_for_originals (FbGraph   *graph,
                    GPtrArray *names,
                    GArray    *shares)
{
  g_autofree double *weight = g_new0 (double, MAX (graph->nodes->len, 1));
  FbNode *best = NULL;
  double best_weight = 0;

  for (guint k = 0; k < names->len; k++)
    {
      guint orig = original_index (graph->model, g_ptr_array_index (names, k));
      double share = shares != NULL && k < shares->len ? g_array_index (shares, double, k) : 1.0 / names->len;

      if (orig == G_MAXUINT)
        continue;
      for (guint i = 0; i < graph->nodes->len; i++)
        if (holds (g_ptr_array_index (graph->nodes, i), orig))
          weight[i] += share + 1e-9;
    }
  for (guint i = 0; i < graph->nodes->len; i++)
    if (weight[i] > best_weight)
      {
        best_weight = weight[i];
        best = g_ptr_array_index (graph->nodes, i);
      }
  return best;
}

static void
on_kernel_activated (FbProfilePanel *panel,
                     guint           kernel_id,
                     FbWindow       *self)
{
  FbGraphView *after;
  FbGraph *graph;
  const FbProfileKernel *kernel;
  FbNode *node;

  if (self->disposed)
    return;
  after = view (self, FALSE);
  graph = fb_graph_view_get_graph (after);

  if (self->disposed || !self->profile_painted || graph == NULL
      || (kernel = fb_profile_find_kernel (self->profile, kernel_id)) == NULL)
    return;
  node = node_for_originals (graph, kernel->nodes, kernel->node_shares);
  /* Host work and copies stand for no original node: their final-stage node, when on screen. */
  if (node == NULL)
    node = fb_graph_find_node (graph, kernel->stage_node);
  self->profile_selecting = TRUE;
  if (node != NULL)
    fb_graph_view_select_node (after, node->id);
  self->profile_selecting = FALSE;
}

static void
on_node_activated (FbProfilePanel *panel,
                   const char     *name,
                   FbWindow       *self)
{
  FbGraphView *after;
  FbGraph *graph;
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  FbNode *node;

  if (self->disposed)
    return;
  after = view (self, FALSE);
  graph = fb_graph_view_get_graph (after);
  if (!self->profile_painted || graph == NULL)
    return;
  g_ptr_array_add (names, (gpointer) name);
  if ((node = node_for_originals (graph, names, NULL)) != NULL)
    fb_graph_view_select_node (after, node->id);
}

/* The kernel that carries most of node's time, to show as selected in the panel. */
static guint
kernel_of_node (FbWindow     *self,
                FbGraph      *graph,
                const FbNode *node)
{
  guint best = G_MAXUINT;
  double best_us = 0;

  for (guint k = 0; k < self->profile->kernels->len; k++)
    {
      const FbProfileKernel *kernel = g_ptr_array_index (self->profile->kernels, k);
      double us = 0;

      if (kernel->stage_node == node->id && node->op == FB_OP_FUSED)
        us = kernel->median_us;
      for (guint i = 0; i < kernel->nodes->len; i++)
        {
          guint orig = original_index (graph->model, g_ptr_array_index (kernel->nodes, i));
          double share = kernel->node_shares != NULL && i < kernel->node_shares->len
                         ? g_array_index (kernel->node_shares, double, i) : 1.0 / kernel->nodes->len;

          if (orig != G_MAXUINT && holds (node, orig))
            us += kernel->median_us * share;
        }
      if (us > best_us)
        {
          best_us = us;
          best = kernel->id;
        }
    }
  return best;
}

char *
_fb_window_profile_describe_node (FbWindow     *self,
                                  FbGraphView  *graph_view,
                                  const FbNode *node)
{
  const FbNodeCost *cost;
  g_autofree char *time = NULL;
  g_autofree char *share = NULL;
  g_autofree char *bytes = NULL;
  g_autofree char *gbps = NULL;
  g_autofree char *gflops = NULL;
  g_autofree char *roof = NULL;
  GString *text;
  double delta, before;

  if (!self->profile_painted)
    return NULL;
  if (!self->profile_selecting)
    fb_profile_panel_select_kernel (self->profile_panel,
                                    node != NULL ? kernel_of_node (self, fb_graph_view_get_graph (graph_view), node)
                                                 : G_MAXUINT);
  if (node == NULL || (cost = fb_graph_view_get_node_cost (graph_view, node)) == NULL)
    return node != NULL ? g_strdup ("Profile: no kernel time lands on this node.") : NULL;
  time = fb_format_time_us (cost->time_us);
  share = fb_format_share (cost->share);
  bytes = fb_format_bytes (cost->bytes);
  gbps = fb_format_gbps (cost->gbps);
  gflops = fb_format_gflops (cost->gflops);
  roof = fb_format_share (cost->roofline_share);
  text = g_string_new (NULL);
  g_string_append_printf (text, "Profile: %s per inference (%s of kernel time), measured.\n"
                          "%s read and written (%s), %s", time, share, bytes,
                          cost->bytes_source == FB_BYTES_MEASURED ? "measured" : "modeled", gbps);
  if (cost->flops > 0)
    g_string_append_printf (text, ", %s", gflops);
  g_string_append_printf (text, "; %s of the roofline; from %u kernel%s.", roof, cost->n_kernels,
                          cost->n_kernels == 1 ? "" : "s");
  if (cost->split)
    g_string_append (text, "\nPart of a fused kernel's cost: split by the cost model.");
  if (fb_graph_view_get_node_delta (graph_view, node, &delta, &before))
    {
      g_autofree char *d = fb_format_delta_us (delta);
      g_autofree char *b = fb_format_time_us (before);

      g_string_append_printf (text, "\nAgainst the previous profile: %s (was %s).", d, b);
    }
  return g_string_free (text, FALSE);
}

static void
on_metric_changed (FbWindow *self)
{
  FbProfileMetric metric = fb_profile_panel_get_metric (self->profile_panel);
  GSettings *settings = settings_of (self);

  if (self->disposed)
    return;
  fb_graph_view_set_profile_metric (view (self, FALSE), metric);
  fb_graph_view_set_profile_metric (view (self, TRUE), metric);
  if (settings != NULL)
    g_settings_set_string (settings, "profile-metric", fb_profile_metric_nick (metric));
}

void
_fb_window_init_profile (FbWindow *self)
{
  g_signal_connect_object (self->profile_panel, "kernel-activated", G_CALLBACK (on_kernel_activated), self, 0);
  g_signal_connect_object (self->profile_panel, "node-activated", G_CALLBACK (on_node_activated), self, 0);
  g_signal_connect_object (self->profile_panel, "notify::metric", G_CALLBACK (on_metric_changed), self,
                           G_CONNECT_SWAPPED);
  self->compare_previous = TRUE;
  gtk_widget_set_visible (GTK_WIDGET (self->profile_panel), FALSE);
  _fb_window_init_profile_run (self);
}

void
_fb_window_constructed_profile (FbWindow *self)
{
  GSettings *settings = settings_of (self);

  if (settings != NULL)
    {
      g_autofree char *nick = g_settings_get_string (settings, "profile-metric");

      fb_profile_panel_set_metric (self->profile_panel, fb_profile_metric_from_nick (nick));
    }
  on_metric_changed (self);
}

void
_fb_window_profile_finalize (FbWindow *self)
{
  g_clear_pointer (&self->profile, fb_profile_unref);
  g_clear_pointer (&self->previous_profile, fb_profile_unref);
  g_clear_object (&self->profile_cancellable);
}

void
_fb_window_class_init_profile (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "win.open-profile", NULL, open_profile_action);
  gtk_widget_class_install_action (widget_class, "win.compare-previous-profile", NULL, compare_previous_action);
  gtk_widget_class_bind_template_child (widget_class, FbWindow, profile_panel);
  gtk_widget_class_bind_template_child (widget_class, FbWindow, profile_box);
  _fb_window_class_init_profile_run (widget_class);
}
